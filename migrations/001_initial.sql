-- Codebases, conversations, isolation environments and the outbound message log.

CREATE TABLE codebases (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name            text NOT NULL UNIQUE,
    -- normalised (no `.git`, no trailing slash); what platform events are matched against
    repository_url  text UNIQUE,
    -- the main checkout, never a worktree
    canonical_path  text NOT NULL,
    default_branch  text NOT NULL,
    -- git work for this codebase runs on task queue `isolation@{host}`
    host            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (host, canonical_path)
);

CREATE TABLE isolation_environments (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    codebase_id          uuid NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
    workflow_type        text NOT NULL CHECK (workflow_type IN ('issue', 'pr', 'review', 'thread', 'task')),
    workflow_id          text NOT NULL,
    provider             text NOT NULL DEFAULT 'worktree',
    working_path         text NOT NULL,
    branch_name          text NOT NULL,
    status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'destroyed')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    created_by_platform  text,
    destroyed_at         timestamptz,
    metadata             jsonb NOT NULL DEFAULT '{}'
);

-- One identity, one active environment; destroyed rows do not block a new one.
CREATE UNIQUE INDEX isolation_environments_active_identity
    ON isolation_environments (codebase_id, workflow_type, workflow_id) WHERE status = 'active';
CREATE UNIQUE INDEX isolation_environments_active_path
    ON isolation_environments (working_path) WHERE status = 'active';
CREATE INDEX isolation_environments_codebase_status
    ON isolation_environments (codebase_id, status);

CREATE TABLE conversations (
    id                        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    platform                  text NOT NULL,
    platform_conversation_id  text NOT NULL,
    codebase_id               uuid REFERENCES codebases (id) ON DELETE SET NULL,
    environment_id            uuid REFERENCES isolation_environments (id) ON DELETE SET NULL,
    cwd                       text,
    created_at                timestamptz NOT NULL DEFAULT now(),
    last_activity_at          timestamptz NOT NULL DEFAULT now(),
    closed_at                 timestamptz,
    UNIQUE (platform, platform_conversation_id)
);
CREATE INDEX conversations_environment ON conversations (environment_id);

-- Every reply the service sends, on every platform, in order (by id).
CREATE TABLE outbound_messages (
    id                        bigserial PRIMARY KEY,
    idempotency_key           text NOT NULL UNIQUE,
    platform                  text NOT NULL,
    platform_conversation_id  text NOT NULL,
    body                      text NOT NULL,
    status                    text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    created_at                timestamptz NOT NULL DEFAULT now(),
    sent_at                   timestamptz
);
CREATE INDEX outbound_messages_conversation
    ON outbound_messages (platform, platform_conversation_id, id);
