-- The message that claimed a once-per-conversation reply ("no agent answers here"). A local activity
-- runs again when the workflow task that held its result is lost; the same message then claims the
-- reply again, where a bare "inserted or not" would tell it another message had, and nobody says it.
ALTER TABLE outbound_messages ADD COLUMN claimed_by text;
