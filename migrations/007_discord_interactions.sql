-- Discord slash commands are answered by follow-ups, which need the interaction's token: the API
-- keeps it here for the worker that replies. A token is good for 15 minutes; rows older than an
-- hour are pruned as new ones arrive.
CREATE TABLE discord_interactions (
    interaction_id  text PRIMARY KEY,
    application_id  text NOT NULL,
    token           text NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX discord_interactions_received ON discord_interactions (received_at);
