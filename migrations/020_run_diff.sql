-- A run's changes as a patch (its worktree before against after, commits and uncommitted files alike),
-- for the dashboard's run page; cut at 256 KiB, and empty when the run changed more than a page can show.
ALTER TABLE agent_runs ADD COLUMN diff text NOT NULL DEFAULT '';
