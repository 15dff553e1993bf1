-- A warm worktree holds its block of ports from its making (its set-up may write them into a config),
-- and hands it to the environment that claims it.
ALTER TABLE port_allocations ALTER COLUMN environment_id DROP NOT NULL;
ALTER TABLE port_allocations ADD COLUMN warm_worktree_id uuid REFERENCES warm_worktrees (id) ON DELETE CASCADE;
ALTER TABLE port_allocations ADD CONSTRAINT port_allocations_one_holder
    CHECK ((environment_id IS NULL) <> (warm_worktree_id IS NULL));
CREATE INDEX port_allocations_warm_worktree ON port_allocations (warm_worktree_id);
