"""Each press is taken once: a button's press, or a GitHub comment that answers a request, is recorded by
the platform's own id of it before it is answered.

A signed body can be posted again by whoever saw it (GitHub's signature leaves out the delivery id,
Telegram's secret is the same on every update, Discord's signature has no expiry). A press starts no
workflow whose id would refuse the second one, so its key is kept in `seen_presses`: the replay is
acknowledged and decides nothing, and tells nobody anything (docs/platforms.md#redeliveries).
"""

from __future__ import annotations

import asyncpg

from isolator import metrics


async def first_press(pool: asyncpg.Pool, platform: str, key: str) -> bool:
    """True, once the press is recorded, the first time its key is seen; False for a replay of it."""
    recorded = await pool.fetchval(
        "INSERT INTO seen_presses (platform, press_key) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING true",
        platform, key,
    )
    if recorded is None:
        metrics.REDELIVERIES.labels(platform, "press").inc()
    return recorded is not None
