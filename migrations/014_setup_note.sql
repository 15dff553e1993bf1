-- What `/status` says about an environment's set-up beyond its state: that the repository has no
-- `.isolator.toml`, the last lines a successful set-up printed, a local `.isolator.toml` not pushed.
ALTER TABLE isolation_environments ADD COLUMN setup_note text;
