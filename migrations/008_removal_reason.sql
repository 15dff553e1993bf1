-- Why an environment was removed, kept with it: "closed", "removed by command", "45 days inactive",
-- "path gone", or "merged" with its proof (which check found all of its work in the default branch).
ALTER TABLE isolation_environments ADD COLUMN removal_reason text;
