"""Automations made through the API for the tests of what people see of them (the dashboard, chat)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack


async def make_automations(stack: Stack, repo: Path, **codebase: str) -> None:
    """`nightly`, on a schedule, reporting to `test:night-reports`; `triage`, on events only, reporting to
    `test:triage-reports`; `codebase`: the registration's fields (its `url`)."""
    registered = await stack.register(repo, **codebase)
    for definition in ({"name": "nightly", "schedule": "@every 1h", "prompt": "look at <b>the flakes</b>",
                        "report": "test:night-reports"},
                       {"name": "triage", "on": ["github:issues.labeled:agent"], "prompt": "triage it",
                        "report": "test:triage-reports"}):
        made = await stack.api.post("/api/automations", json={**definition, "codebase": registered["name"]})
        assert made.status_code == 201, made.text
