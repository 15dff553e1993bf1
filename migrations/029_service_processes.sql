-- Every running worker and API process, one row each, refreshed every second by the process itself
-- (workers/presence.py). A host is alive while one of its workers' rows is fresh; `last_seen` says since
-- when a host is silent, from the database's clock, whichever machine asks. `fingerprint` is a hash of the
-- settings that change what a message does (isolator/fingerprint.py), so processes that disagree are
-- named; it holds no setting's value. A row whose process stopped cleanly has `stopped_at`; rows silent
-- for a day are removed by the next process that starts.
CREATE TABLE service_processes (
    id               uuid PRIMARY KEY,
    kind             text NOT NULL CHECK (kind IN ('worker', 'api')),
    host             text NOT NULL,
    machine          text NOT NULL,
    pid              integer NOT NULL,
    started_at       timestamptz NOT NULL DEFAULT now(),
    last_seen        timestamptz NOT NULL DEFAULT now(),
    stopped_at       timestamptz,
    fingerprint      text NOT NULL,
    settings_hashes  jsonb NOT NULL,
    agent            text,
    runs_messages    boolean NOT NULL,
    disk_free_bytes  bigint,
    disk_total_bytes bigint
);
CREATE INDEX service_processes_host ON service_processes (host, last_seen DESC);
