"""The GitHub App the dashboard's manifest flow made, kept in PostgreSQL (migration 026) with its
secrets (private key, webhook secret, OAuth client secret) encrypted by ISOLATOR_SECRET_KEY (Fernet):
a copy of the database alone gives no one the App's key."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import asyncpg
from cryptography.fernet import Fernet, InvalidToken


@dataclass(frozen=True)
class GitHubApp:
    app_id: int
    private_key: str  # PEM
    slug: str | None  # None until GET /app says it (an App given by the environment)
    webhook_secret: str | None
    source: Literal["environment", "dashboard"]
    html_url: str = ""


class SecretKeyError(Exception):
    """ISOLATOR_SECRET_KEY is not a Fernet key, or not the one the App was stored with; says which."""


def fernet_of(secret_key: str) -> Fernet:
    try:
        return Fernet(secret_key.encode())
    except (ValueError, TypeError):
        raise SecretKeyError("ISOLATOR_SECRET_KEY is not a Fernet key (32 bytes, url-safe base64): "
                             "`isolator secret-key` prints one") from None


async def store_app(connection: asyncpg.Pool | asyncpg.Connection, secret_key: str, app_id: int, slug: str,
                    html_url: str, secrets: dict[str, str]) -> None:
    """The App, replacing any stored before (one App per service)."""
    sealed = fernet_of(secret_key).encrypt(json.dumps(secrets).encode())
    await connection.execute(
        """INSERT INTO github_apps (singleton, app_id, slug, html_url, secrets) VALUES (true, $1, $2, $3, $4)
           ON CONFLICT (singleton) DO UPDATE SET app_id = $1, slug = $2, html_url = $3, secrets = $4,
                                                 created_at = now()""",
        app_id, slug, html_url, sealed)


async def load_app(connection: asyncpg.Pool | asyncpg.Connection, secret_key: str | None) -> GitHubApp | None:
    """The stored App; None when there is none. Raises SecretKeyError when it cannot be read with this key."""
    row = await connection.fetchrow("SELECT app_id, slug, html_url, secrets FROM github_apps WHERE singleton")
    if row is None:
        return None
    if secret_key is None:
        raise SecretKeyError("a GitHub App is stored, but ISOLATOR_SECRET_KEY is not set: set the key it was "
                             "stored with")
    try:
        secrets = json.loads(fernet_of(secret_key).decrypt(bytes(row["secrets"])))
    except InvalidToken:
        raise SecretKeyError("the stored GitHub App cannot be read with this ISOLATOR_SECRET_KEY: set the key it "
                             "was stored with, or connect the App again") from None
    return GitHubApp(app_id=row["app_id"], private_key=secrets["pem"], slug=row["slug"],
                     webhook_secret=secrets.get("webhook_secret"), source="dashboard", html_url=row["html_url"])
