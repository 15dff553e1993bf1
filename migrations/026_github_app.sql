-- The GitHub App made through the dashboard's "Connect GitHub" page (docs/platforms.md#connect-github):
-- one row, the service's App. Its private key, webhook secret and OAuth client secret are one Fernet token
-- encrypted with ISOLATOR_SECRET_KEY; the id and slug are not secret.
CREATE TABLE github_apps (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    app_id     bigint NOT NULL,
    slug       text NOT NULL,
    html_url   text NOT NULL DEFAULT '',
    secrets    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
