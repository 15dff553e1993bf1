"""Whether an API process may start message workflows itself (EAGER_START): only when its settings agree with
the workers'. An API whose `AGENT*` (or any other behaviour setting) differs would answer the messages it
picks up, sent through any API, otherwise than the workers do (issue: 6 of 6 answered "No coding agent")."""

from __future__ import annotations

import asyncpg

from activities.hosts.presence import SILENT_AFTER_SECONDS
from isolator.fingerprint import agent_of, differing_settings, fingerprint_of
from isolator.settings import Settings

# The live workers: a stopped one's settings (a host gone, an older deployment) say nothing of today's.
_WORKERS = """
    SELECT host, fingerprint, settings_hashes, agent FROM service_processes
    WHERE kind = 'worker' AND stopped_at IS NULL AND last_seen > now() - make_interval(secs => $1)"""


async def eager_refusal(pool: asyncpg.Pool, settings: Settings) -> str | None:
    """Why this API must not start message workflows itself, in one line for its log; None: it may (also when
    no worker is alive yet: workers/eager_guard.py compares again once they are)."""
    workers = await pool.fetch(_WORKERS, SILENT_AFTER_SECONDS)
    mine = fingerprint_of(settings)
    others = [row for row in workers if row["fingerprint"] != mine.digest]
    if not others:
        return None
    hosts = ", ".join(sorted({row["host"] for row in others}))
    if agent_of(settings) is None and any(row["agent"] for row in others):
        agents = ", ".join(sorted({row["agent"] for row in others if row["agent"]}))
        return (f"EAGER_START refused: this API has no agent (AGENT, AGENT_COMMAND and AGENT_WORKFLOW are unset) "
                f"while the workers of {hosts} run {agents}: message workflows start on the workers only. Give this "
                "API the workers' AGENT* settings to start them here.")
    differing = sorted({name for row in others for name in differing_settings(mine.parts, row["settings_hashes"])})
    return (f"EAGER_START refused: this API's {', '.join(differing)} differ from the workers' of {hosts}: message "
            "workflows start on the workers only. Give this API the workers' settings to start them here.")
