-- A claimed warm worktree's block passes to its environment without ever being free: the claim marks
-- it for the worktree's new path in the transaction that ends the warm row, and the environment's
-- allocation takes the marked block over. A mark nobody took over (a create undone) expires.
ALTER TABLE port_allocations ADD COLUMN claimed_for text, ADD COLUMN claimed_at timestamptz;
ALTER TABLE port_allocations DROP CONSTRAINT port_allocations_one_holder;
ALTER TABLE port_allocations ADD CONSTRAINT port_allocations_one_holder
    CHECK (num_nonnulls(environment_id, warm_worktree_id, claimed_for) = 1);
