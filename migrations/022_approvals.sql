-- Asking the human (docs/approvals.md): every request a run made of a person, and its answer.
CREATE TABLE approvals (
    id               uuid PRIMARY KEY,
    -- what a GitHub comment names (`/approve <code>`) and a button sends back
    code             text NOT NULL UNIQUE,
    run_id           uuid NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    environment_id   uuid NOT NULL REFERENCES isolation_environments (id) ON DELETE CASCADE,
    platform         text NOT NULL,
    conversation_id  text NOT NULL,
    -- the platform user whose message started the run: with ADMIN_USERS, the one who may answer
    requested_by     text,
    kind             text NOT NULL CHECK (kind IN ('tool', 'question', 'plan', 'budget', 'daily_budget')),
    tool_name        text,
    tool_input       jsonb NOT NULL DEFAULT '{}',
    tool_use_id      text,
    suggested_rule   text,
    summary          text NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'allowed', 'denied', 'answered', 'timed_out', 'stopped')),
    -- the answer: which button (or command), by whom, when, and a reason or a free-text answer
    choice           text,
    answered_by      text,
    answered_at      timestamptz,
    answer_text      text NOT NULL DEFAULT '',
    -- the request's chat message (outbound_messages.idempotency_key), edited to the outcome
    message_key      text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX approvals_run ON approvals (run_id);
CREATE INDEX approvals_pending ON approvals (state, created_at);

-- "Allow for this conversation": the rules a person granted, asked no more in that conversation.
CREATE TABLE conversation_allow_rules (
    platform         text NOT NULL,
    conversation_id  text NOT NULL,
    rule             text NOT NULL,
    granted_by       text NOT NULL,
    granted_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform, conversation_id, rule)
);

-- `/budget +10`: a raise of a codebase's daily budget, for one UTC day, by an ADMIN_USERS person.
CREATE TABLE budget_raises (
    id               bigserial PRIMARY KEY,
    codebase_id      uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    day              date NOT NULL,
    amount_usd       numeric(12, 2) NOT NULL CHECK (amount_usd > 0),
    raised_by        text NOT NULL,
    platform         text NOT NULL,
    conversation_id  text NOT NULL,
    key              text NOT NULL UNIQUE,
    raised_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX budget_raises_day ON budget_raises (codebase_id, day);

-- A run that ended waiting for a person's answer (its session resumes in the next run).
ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_status_check;
ALTER TABLE agent_runs ADD CONSTRAINT agent_runs_status_check CHECK (status IN
    ('queued', 'running', 'done', 'failed', 'timed_out', 'stopped', 'interrupted', 'dropped', 'waiting'));

-- A reply's buttons (the test adapter shows them; the platforms render them natively).
ALTER TABLE outbound_messages ADD COLUMN buttons jsonb NOT NULL DEFAULT '[]';
