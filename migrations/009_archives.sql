-- Every removal is archived: the worktree as it was (uncommitted and untracked files included) is a
-- commit under `archive_ref`, and `branch_tip` is where its branch was. A hibernated environment keeps
-- its row, branch and ports, with no folder, until the next message brings it back.
ALTER TABLE isolation_environments DROP CONSTRAINT isolation_environments_status_check;
ALTER TABLE isolation_environments ADD CONSTRAINT isolation_environments_status_check
    CHECK (status IN ('active', 'hibernated', 'destroyed'));

ALTER TABLE isolation_environments
    ADD COLUMN archive_ref text,
    ADD COLUMN branch_tip text,
    ADD COLUMN archived_at timestamptz,
    -- the retention pruned the archive: nothing is left to restore
    ADD COLUMN archive_pruned_at timestamptz,
    -- a restore brought it back as this environment
    ADD COLUMN restored_as uuid REFERENCES isolation_environments (id) ON DELETE SET NULL,
    -- measured by the scheduled cleanup (real blocks), for the API and the disk budget
    ADD COLUMN disk_bytes bigint,
    ADD COLUMN disk_measured_at timestamptz,
    ADD COLUMN merge_proof text;

-- A hibernated environment still holds its identity and its path: the next message wakes it there.
DROP INDEX isolation_environments_active_identity;
CREATE UNIQUE INDEX isolation_environments_active_identity
    ON isolation_environments (codebase_id, workflow_type, workflow_id) WHERE status IN ('active', 'hibernated');
DROP INDEX isolation_environments_active_path;
CREATE UNIQUE INDEX isolation_environments_active_path
    ON isolation_environments (working_path) WHERE status IN ('active', 'hibernated');

-- What can still be restored, newest first, per codebase.
CREATE INDEX isolation_environments_restorable
    ON isolation_environments (codebase_id, destroyed_at DESC)
    WHERE archive_ref IS NOT NULL AND archive_pruned_at IS NULL AND restored_as IS NULL;
