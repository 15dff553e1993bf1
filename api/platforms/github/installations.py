"""The GitHub App's installations as its webhooks say them (docs/platforms.md#connect-github).

Every delivery of an installed App carries `installation.id`: the installation of its repository is
recorded (with the codebase) the first time this process sees it. `installation` and
`installation_repositories` events add and take out repositories: one added is registered by itself
with GITHUB_AUTO_REGISTER=true (otherwise a mention in it is answered with how to register it, `/clone`);
one taken out is marked, and the open conversations working on it are told once.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import asyncpg
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from activities.chat.platforms import deliverers
from activities.chat.platforms.github_app.credentials import credentials_of
from activities.chat.platforms.github_app.installations import codebases_of, mark_removed, record_installation
from activities.chat.platforms.github_app.manifest import site_of
from activities.chat.replies import ReplyActivities
from isolator.contracts.codebase import RepositorySource
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from workflows.codebase import RegisterCodebaseWorkflow, register_workflow_id

log = logging.getLogger(__name__)

INSTALLATION_EVENTS = ("installation", "installation_repositories")


def installation_of(payload: Mapping[str, Any]) -> int | None:
    installation = payload.get("installation")
    found = installation.get("id") if isinstance(installation, Mapping) else None
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else None


async def note_installation(settings: Settings, pool: asyncpg.Pool, payload: Mapping[str, Any]) -> None:
    """Record which installation holds the delivery's repository, once per process and change."""
    installation = installation_of(payload)
    repository = payload.get("repository")
    full_name = repository.get("full_name") if isinstance(repository, Mapping) else None
    if installation is None or not isinstance(full_name, str) or full_name.count("/") != 1:
        return
    if credentials_of(settings).note_installation(full_name, installation):
        await record_installation(pool, full_name, installation)


async def installation_event(event: str, payload: Mapping[str, Any], settings: Settings, pool: asyncpg.Pool,
                             client: Client) -> dict[str, Any]:
    """Repositories added to or taken out of the installation; what was done, for the delivery's answer."""
    installation, action = installation_of(payload), payload.get("action")
    if installation is None:
        return {"status": "ignored", "reason": "no installation.id"}
    if event == "installation":
        listed = _names(payload.get("repositories"))
        added = listed if action in ("created", "unsuspend", "new_permissions_accepted") else []
        removed = listed if action in ("deleted", "suspend") else []
    else:
        added, removed = _names(payload.get("repositories_added")), _names(payload.get("repositories_removed"))
    credentials = credentials_of(settings)
    registering = []
    for full_name in added:
        credentials.note_installation(full_name, installation)
        await record_installation(pool, full_name, installation)
        if settings.github_auto_register and not await codebases_of(pool, full_name):
            registering.append(await _register(settings, client, full_name))
    told = 0
    for full_name in removed:
        credentials.forget_installation(full_name)
        if await mark_removed(pool, full_name, installation):
            told += await _tell_removed(settings, pool, full_name)
    return {"status": "recorded", "added": added, "removed": removed, "registering": registering, "told": told}


async def _register(settings: Settings, client: Client, full_name: str) -> str:
    source = RepositorySource(host=settings.host, path=None, url=f"{site_of(settings.github_api_url)}/{full_name}",
                              name=None)
    handle = await client.start_workflow(RegisterCodebaseWorkflow.run, source, id=register_workflow_id(source),
                                         task_queue=settings.task_queue,
                                         id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                                         static_summary=f"register {full_name} (added to the GitHub App)")
    return handle.id


async def _tell_removed(settings: Settings, pool: asyncpg.Pool, full_name: str) -> int:
    """Each open conversation working in the repository's codebases hears it once (its own key); GitHub's own
    conversations there are not told: the App can no longer write to them."""
    codebases = await codebases_of(pool, full_name)
    rows = await pool.fetch(
        """SELECT DISTINCT v.platform, v.platform_conversation_id FROM conversations v
           JOIN isolation_environments e ON e.id = v.environment_id
           WHERE e.codebase_id = ANY($1::uuid[]) AND v.closed_at IS NULL AND v.platform <> 'github'""", codebases)
    replies = ReplyActivities(pool, deliverers(settings, pool))
    text = (f"The GitHub App was taken out of `{full_name}`: the service can no longer push to it or open pull "
            "requests there. Add the repository to the App's installation again to carry on.")
    told = 0
    for row in rows:
        key = f"github-removed:{full_name.lower()}:{row['platform']}:{row['platform_conversation_id']}"
        try:
            await replies.deliver_once(ReplyInput(row["platform"], row["platform_conversation_id"], text, key))
            told += 1
        except Exception as error:  # noqa: BLE001 - one chat down keeps the others told and the delivery answered
            log.warning("could not tell %s:%s that %s left the App: %s", row["platform"],
                        row["platform_conversation_id"], full_name, error)
    return told


def _names(repositories: object) -> list[str]:
    if not isinstance(repositories, list):
        return []
    return [item["full_name"] for item in repositories if isinstance(item, Mapping)
            and isinstance(item.get("full_name"), str) and item["full_name"].count("/") == 1]
