-- The pull-request loop (docs/pr-loop.md). The heads the service pushed: CI on one of them is the
-- agent's to fix; CI on any other head (a person's push) is not, unless someone asks with `/fix-ci`.
CREATE TABLE pushed_heads (
    codebase_id  uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    sha          text NOT NULL,
    branch_name  text NOT NULL,
    run_id       uuid,
    autofix      boolean NOT NULL DEFAULT true,  -- `[results] autofix` of the repository when it was pushed
    pushed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (codebase_id, sha)
);

-- Per PR: the fix runs CI started in a row whose pushed heads stayed red (a person's push or a green
-- head sets it back to 0), the last head CI judged and how, and why fixing stopped, if it did.
ALTER TABLE pull_requests
    ADD COLUMN fix_attempts  integer NOT NULL DEFAULT 0,
    ADD COLUMN fix_sha       text,  -- the head the last counted fix run was for: a retry counts it once
    ADD COLUMN ci_sha        text,
    ADD COLUMN ci_state      text CHECK (ci_state IN ('green', 'red', 'pending')),
    ADD COLUMN fixing_stopped text;
