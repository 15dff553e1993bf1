"""The service acting as a GitHub App (docs/platforms.md#connect-github): which App (the environment's
GITHUB_APP_ID and key, else the one the dashboard's "Connect GitHub" page stored, encrypted, in
PostgreSQL), its installation tokens (one per installation, cached, renewed before they expire), the
installation of each repository (as the webhooks say it), and its own login `<slug>[bot]`.

Every GitHub call and push asks credentials.py for its credentials, so GITHUB_TOKEN, the App from the
environment and the App from the dashboard are one choice made in one place."""
