-- Warm worktrees: made (and set up) in advance at the fresh base, claimed exactly once by a create.
-- A codebase may keep its own pool size; NULL: WARM_WORKTREES applies.
ALTER TABLE codebases ADD COLUMN warm_worktrees integer CHECK (warm_worktrees BETWEEN 0 AND 20);

CREATE TABLE warm_worktrees (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    codebase_id   uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    -- under WORKTREE_BASE/.warm/<codebase>/, apart from the environments' worktrees
    path          text NOT NULL UNIQUE,
    -- making, refreshing, removing: the pool's refill works on it (a row left so by a killed worker is
    -- removed by the next refill); ready: claimable; failed: its set-up failed (rebuilt by the next
    -- refill); claimed: a create is moving it into place at `claimed_for`
    state         text NOT NULL CHECK (state IN ('making', 'refreshing', 'removing', 'ready', 'failed', 'claimed')),
    base_commit   text,
    -- what its set-up was made from (commands, inputs, include): another one means set it up again
    setup_digest  text,
    setup_ran     boolean NOT NULL DEFAULT false,
    failure       text,
    -- the worktree path of the create that claimed it: one claim per path, decided by the database
    claimed_for   text UNIQUE,
    disk_bytes    bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX warm_worktrees_codebase_state ON warm_worktrees (codebase_id, state);
