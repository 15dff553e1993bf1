-- The coding agent: which program a codebase runs (NULL: AGENT_COMMAND; an empty list: none), and
-- every run of it, kept with its answer and its log (each capped at 10 MiB, with a note where cut).
ALTER TABLE codebases ADD COLUMN agent_command jsonb
    CHECK (agent_command IS NULL OR jsonb_typeof(agent_command) = 'array');

CREATE TABLE agent_runs (
    id               uuid PRIMARY KEY,
    environment_id   uuid NOT NULL REFERENCES isolation_environments (id) ON DELETE CASCADE,
    platform         text NOT NULL,
    conversation_id  text NOT NULL,
    message          text NOT NULL,
    status           text NOT NULL DEFAULT 'queued' CHECK (status IN
                         ('queued', 'running', 'done', 'failed', 'timed_out', 'stopped', 'interrupted', 'dropped')),
    exit_code        integer,
    queued_at        timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    changed_files    text[] NOT NULL DEFAULT '{}',
    commits          integer,
    output           text NOT NULL DEFAULT '',
    output_cut       boolean NOT NULL DEFAULT false,
    log              text NOT NULL DEFAULT '',
    log_cut          boolean NOT NULL DEFAULT false
);
CREATE INDEX agent_runs_environment ON agent_runs (environment_id, queued_at);
CREATE INDEX agent_runs_conversation ON agent_runs (platform, conversation_id, queued_at);
