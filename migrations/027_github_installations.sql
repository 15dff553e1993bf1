-- Which installation of the GitHub App holds each repository, as each webhook's `installation.id` says
-- (docs/platforms.md#connect-github): the installation token of a repository's calls and pushes. A
-- repository taken out of the installation is marked, and its conversations told once.
CREATE TABLE github_installations (
    repository      text PRIMARY KEY,  -- owner/name, lower-cased
    installation_id bigint NOT NULL,
    removed_at      timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- The codebase's own record of it, set with the row above.
ALTER TABLE codebases ADD COLUMN github_installation_id bigint;
