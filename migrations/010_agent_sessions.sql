-- Agent drivers (docs/agent-drivers.md): a codebase's own driver, each conversation's agent session,
-- and what every run cost.
ALTER TABLE codebases ADD COLUMN agent jsonb
    CHECK (agent IS NULL OR jsonb_typeof(agent) = 'object');

-- The conversation's current session: resumed by its next message when it runs the same driver in
-- the same environment; replaced by a new one otherwise, and deleted by `/reset`.
CREATE TABLE agent_sessions (
    platform          text NOT NULL,
    conversation_id   text NOT NULL,
    id                uuid NOT NULL,          -- ours: names its folder (ISOLATOR_SESSION_DIR)
    driver            text NOT NULL,
    environment_id    uuid NOT NULL REFERENCES isolation_environments (id) ON DELETE CASCADE,
    agent_session_id  text,                   -- the agent's: Claude's session_id, Codex's thread_id
    turns             integer NOT NULL DEFAULT 0,
    cost_usd          numeric(14, 6) NOT NULL DEFAULT 0,
    tokens            bigint NOT NULL DEFAULT 0,
    agent_usage       jsonb NOT NULL DEFAULT '{}',  -- the usage the agent last reported for its whole thread (Codex)
    started_at        timestamptz NOT NULL DEFAULT now(),
    last_run_at       timestamptz,
    PRIMARY KEY (platform, conversation_id)
);

ALTER TABLE agent_runs
    ADD COLUMN driver             text,
    ADD COLUMN session_id         text,
    ADD COLUMN cost_usd           numeric(14, 6),
    ADD COLUMN input_tokens       bigint,
    ADD COLUMN output_tokens      bigint,
    ADD COLUMN cache_read_tokens  bigint,
    ADD COLUMN cache_write_tokens bigint;
CREATE INDEX agent_runs_started ON agent_runs (started_at);
