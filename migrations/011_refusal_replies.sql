-- A refused sender's conversation is answered at most once an hour (isolator/trust.py): the last answer,
-- and the message that claimed it. The only thing a refused message writes.
CREATE TABLE refusal_replies (
    platform text NOT NULL,
    platform_conversation_id text NOT NULL,
    replied_at timestamptz NOT NULL DEFAULT now(),
    claimed_by text NOT NULL,
    PRIMARY KEY (platform, platform_conversation_id)
);
CREATE INDEX refusal_replies_replied_at ON refusal_replies (replied_at);
