-- The dashboard's logins (with API_TOKEN set): one row per session, shared by every API process, so that
-- a logout or an expiry holds wherever the cookie is replayed. Only a hash of the session's id is kept:
-- this table alone lets nobody in.
CREATE TABLE dashboard_sessions (
    id_hash     text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
