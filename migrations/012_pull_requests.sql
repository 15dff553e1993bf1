-- Results: the pull request a branch's work goes to. One per branch of a codebase, whichever
-- environment holds the branch now (a restored worktree is a new environment on the same branch).
-- `remote_branch` is the branch on origin (an issue branch may carry `[results] branch_prefix`).
CREATE TABLE pull_requests (
    codebase_id     uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    branch_name     text NOT NULL,
    remote_branch   text NOT NULL,
    repository      text NOT NULL,  -- owner/name on GitHub
    number          integer NOT NULL,
    url             text NOT NULL,
    base_branch     text NOT NULL,
    title           text NOT NULL DEFAULT '',
    draft           boolean NOT NULL DEFAULT false,
    -- opened: the service opened it; followed: a PR someone else opened (a PR conversation's own)
    origin          text NOT NULL CHECK (origin IN ('opened', 'followed')),
    -- as GitHub last said (a delivery or `/status`)
    state           text NOT NULL DEFAULT 'open',
    checks          text,
    opened_by       text,  -- platform:conversation that asked for it
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (codebase_id, branch_name)
);
