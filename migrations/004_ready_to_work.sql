-- Ready to work: each environment's set-up state, its block of ports, and the platform's id of
-- each reply (a message updated in place, such as set-up progress, is edited through it).
ALTER TABLE isolation_environments ADD COLUMN setup_state text NOT NULL DEFAULT 'none'
    CHECK (setup_state IN ('none', 'running', 'ready', 'failed', 'skipped'));

-- One row per port: a port belongs to at most one active environment of its host. The primary key
-- is the guarantee, not a lock in memory; an environment's rows go when it is destroyed.
CREATE TABLE port_allocations (
    host            text NOT NULL,
    port            integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
    environment_id  uuid NOT NULL REFERENCES isolation_environments (id) ON DELETE CASCADE,
    PRIMARY KEY (host, port)
);
CREATE INDEX port_allocations_environment ON port_allocations (environment_id);

ALTER TABLE outbound_messages ADD COLUMN platform_message_id text;
