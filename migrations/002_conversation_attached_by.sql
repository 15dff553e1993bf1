-- The message (workflow id) that last attached the conversation to its environment. A retry of
-- that same message after a crash recognises its own attachment, and still tells the user.
ALTER TABLE conversations ADD COLUMN attached_by text;
