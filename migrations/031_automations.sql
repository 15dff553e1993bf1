-- Automations (docs/automations.md): the agent works on a schedule or on an event, with no one typing.
CREATE TABLE automations (
    name                  text PRIMARY KEY,
    -- 'repository': `[[automations]]` of its codebase's committed default branch; 'api': the operator's
    origin                text NOT NULL CHECK (origin IN ('repository', 'api')),
    codebase_id           uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    -- the definition as read (isolator/contracts/automation.py Automation), and its text's hash
    definition            jsonb NOT NULL,
    paused                boolean NOT NULL DEFAULT false,
    paused_reason         text NOT NULL DEFAULT '',
    -- firings that failed one after another; at 3 the automation pauses itself
    failures_in_a_row     integer NOT NULL DEFAULT 0,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX automations_codebase ON automations (codebase_id);

-- One row per firing: its workflow, what fired it, its conversation and run, and how it ended.
CREATE TABLE automation_firings (
    workflow_id           text PRIMARY KEY,
    automation            text NOT NULL REFERENCES automations (name) ON DELETE CASCADE,
    -- 'schedule' or the event (`github:issues.labeled`), and the event's own id
    trigger               text NOT NULL,
    conversation_id       text NOT NULL,
    -- where it reports (a platform's conversation): its approval requests are asked there too
    report_platform       text NOT NULL,
    report_conversation   text NOT NULL,
    run_id                uuid,
    state                 text NOT NULL DEFAULT 'running'
                          CHECK (state IN ('running', 'done', 'failed', 'nothing', 'skipped', 'refused')),
    summary               text NOT NULL DEFAULT '',
    cost_usd              numeric(14, 6) NOT NULL DEFAULT 0,
    pull_request_url      text,
    started_at            timestamptz NOT NULL DEFAULT now(),
    finished_at           timestamptz
);
CREATE INDEX automation_firings_automation ON automation_firings (automation, started_at DESC);
CREATE INDEX automation_firings_conversation ON automation_firings (conversation_id, started_at DESC);
