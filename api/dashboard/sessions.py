"""The dashboard's logins in PostgreSQL (`dashboard_sessions`): every API process sees a session end at
its expiry (SESSION_HOURS after the login) or at its logout, whichever comes first."""

from __future__ import annotations

import hashlib

import asyncpg


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


async def open_session(pool: asyncpg.Pool, session_id: str, hours: float) -> None:
    # Expired rows go as new ones come: the table holds about the sessions of the last SESSION_HOURS.
    await pool.execute(
        """WITH expired AS (DELETE FROM dashboard_sessions WHERE expires_at <= now())
           INSERT INTO dashboard_sessions (id_hash, expires_at) VALUES ($1, now() + make_interval(secs => $2))""",
        _hash(session_id), hours * 3600,
    )


async def session_is_open(pool: asyncpg.Pool, session_id: str) -> bool:
    return bool(await pool.fetchval(
        "SELECT EXISTS (SELECT 1 FROM dashboard_sessions WHERE id_hash = $1 AND expires_at > now())",
        _hash(session_id),
    ))


async def close_session(pool: asyncpg.Pool, session_id: str) -> None:
    await pool.execute("DELETE FROM dashboard_sessions WHERE id_hash = $1", _hash(session_id))
