"""GitHub's events as automations' triggers (docs/automations.md), after the webhook verified them.

A push to a codebase's default branch reconciles its `[[automations]]`; an event an automation names
(`github:issues.labeled:agent`) fires it. Each firing's id carries the event's own digest, so a
redelivered event fires once.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import asyncpg
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from activities.automations.records import AutomationRecords
from activities.database import codebase_from_row
from api.automations import start_firing
from isolator.automation_events import github_event_fields, matches_github
from isolator.automation_rules import EVENTS
from isolator.contracts.automation import FiringInput
from isolator.repositories import repository_key
from isolator.settings import Settings
from workflows.automation_reconcile import ReconcileAutomationsWorkflow, reconcile_workflow_id

log = logging.getLogger(__name__)
# The events a push reconciles on or an automation may name (isolator/automation_rules.py EVENTS).
AUTOMATION_EVENTS = frozenset({"push"} | {kind.partition(".")[0] for kind in EVENTS["github"]})


async def fire_automations(event: str, payload: dict[str, Any], settings: Settings, pool: asyncpg.Pool,
                           client: Client, mention: str) -> list[str]:
    """The workflows this event started: a reconcile, firings (none: it concerns no automation).

    `mention`: the bot's own (`@<slug>`): what it did itself (the draft PR of a firing) fires nothing."""
    if event not in AUTOMATION_EVENTS:  # a comment, the chat's own path, reads nothing more here
        return []
    repository = payload.get("repository")
    url = repository.get("html_url") if isinstance(repository, dict) else None
    if not isinstance(url, str):
        return []
    wanted = repository_key(url)
    rows = await pool.fetch("SELECT * FROM codebases WHERE repository_url IS NOT NULL")
    row = next((row for row in rows if repository_key(row["repository_url"]) == wanted), None)
    if row is None:
        return []
    codebase = codebase_from_row(row)
    started = []
    if event == "push" and payload.get("ref") == f"refs/heads/{codebase.default_branch}" and payload.get("after"):
        handle = await client.start_workflow(
            ReconcileAutomationsWorkflow.run, codebase, id=reconcile_workflow_id(codebase.id, str(payload["after"])),
            task_queue=settings.task_queue, id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary=f"automations of {codebase.name} as pushed")
        started.append(handle.id)
    sender = payload.get("sender")
    login = str(sender.get("login", "")).lower() if isinstance(sender, dict) else ""
    own = mention.removeprefix("@").lower()
    if settings.automations == "off" or login in (own, f"{own}[bot]"):
        return started
    fields = github_event_fields(event, payload)
    digest = hashlib.sha256(json.dumps([event, payload], sort_keys=True).encode()).hexdigest()[:20]
    for stored in await AutomationRecords(pool).all(codebase.id):
        trigger = next((trigger for trigger in stored.automation.triggers if matches_github(trigger, event, payload)),
                       None)
        if trigger is None or stored.paused:
            continue
        firing = FiringInput(stored.automation.name, trigger=trigger.spelled(), event_id=digest, event=fields,
                             origin=fields.get("conversation") or None)
        started.append(await start_firing(client, settings, firing, digest))
        log.info("automation %s fired by %s", stored.automation.name, trigger.spelled())
    return started
