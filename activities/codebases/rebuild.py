"""A lost disk is rebuilt, not waited on: a codebase's checkout found missing on its host is cloned again
from its URL, and its worktrees put back from origin.

A worker looks at its host's codebases when it starts, before it takes any work (a replacement worker
on an empty disk finds them all gone), and a host step that finds a checkout missing clones it at once
instead of failing on it until someone notices. Each worktree whose folder is gone comes back from its
archive pushed to origin (ARCHIVE_PUSH), else from its branch on origin; what was never pushed is lost,
and each of its conversations is told so, once. The codebase row says what happened (`checkout_state`,
`checkout_note`, `checkout_changed_at`: the hosts page and the codebase page show them), and the log.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import asyncpg
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.chat.replies import ReplyActivities
from activities.codebases.placing import WorktreePlacer
from activities.codebases.relocation_texts import lost_with_disk, recreated
from activities.database import codebase_from_row
from activities.git.host_locks import host_lock
from activities.git.paths import UnsafePathError, ensure_inside, worktree_path
from activities.git.runner import GitError, run_git
from activities.providers.worktree.archive import archive_ref
from activities.providers.worktree.archive_push import fetch_pushed_archive, push_token
from activities.providers.worktree.archive_store import archive_store
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import DestroyRequest, environment_workflow_id
from isolator.contracts.errors import CHECKOUT_LOST
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings

log = logging.getLogger(__name__)


class CheckoutRebuilder:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, replies: ReplyActivities | None = None,
                 client: Client | None = None) -> None:
        self.settings, self.pool, self.client = settings, pool, client
        self.replies = replies or ReplyActivities(pool)
        self.placer = WorktreePlacer(settings)

    async def rebuild_missing(self) -> list[str]:
        """Every codebase of this host whose checkout is gone, rebuilt; their names."""
        rows = await self.pool.fetch("SELECT * FROM codebases WHERE host = $1 ORDER BY name", self.settings.host)
        rebuilt = []
        for row, codebase in ((row, codebase_from_row(row)) for row in rows):
            if Path(codebase.canonical_path).is_dir():
                if row["checkout_state"] == "lost":  # back (a disk mounted again, a clone by hand)
                    await self._record(codebase, None, f"its checkout is there again on {self.settings.host}")
                continue
            try:
                await self.ensure_checkout(codebase)
            except ApplicationError as error:  # recorded and logged: the worker starts all the same
                log.error("codebase %s: %s", codebase.name, error.message)
                continue
            await self.put_back_worktrees(codebase)
            rebuilt.append(codebase.name)
        return rebuilt

    async def ensure_checkout(self, codebase: Codebase) -> bool:
        """The checkout there again; True when it had to be cloned. Raises CHECKOUT_LOST (not retried)
        when there is no URL to clone from or the clone fails: waiting would never bring it back."""
        checkout = Path(codebase.canonical_path)
        if checkout.is_dir():
            return False
        async with host_lock(self.settings.worktree_base, checkout):
            if checkout.is_dir():  # another step cloned it meanwhile
                return False
            if not codebase.repository_url:
                await self._lost(codebase, f"its checkout `{checkout}` is gone and it was registered without a URL "
                                           "to clone it from: register it again from a checkout or a URL")
            if not checkout.parent.is_dir() and not checkout.is_relative_to(self.settings.workspace_path):
                # A folder of the operator's whose parent is gone too: a disk not mounted, not one to fill.
                await self._lost(codebase, f"its checkout `{checkout}` is gone, and so is `{checkout.parent}`: mount "
                                           "what held it, or create that folder to have it cloned again there")
            await self._record(codebase, "rebuilding", f"cloning {codebase.repository_url} again into `{checkout}`")
            log.warning("codebase %s: checkout %s is missing on %s; cloning %s again", codebase.name, checkout,
                        self.settings.host, codebase.repository_url)
            staging = checkout.with_name(f".{checkout.name}.rebuilding")
            shutil.rmtree(staging, ignore_errors=True)
            staging.parent.mkdir(parents=True, exist_ok=True)
            try:
                await run_git("clone", "--quiet", "--", codebase.repository_url, str(staging))
                staging.rename(checkout)
            except (GitError, OSError) as error:
                shutil.rmtree(staging, ignore_errors=True)
                await self._lost(codebase, f"its checkout `{checkout}` is gone and cloning "
                                           f"{codebase.repository_url} again failed: {error}")
        await self._record(codebase, "rebuilt", f"its checkout was missing on {self.settings.host}; cloned again "
                                                f"from {codebase.repository_url}")
        log.warning("codebase %s: checkout %s cloned again from %s", codebase.name, checkout, codebase.repository_url)
        return True

    async def put_back_worktrees(self, codebase: Codebase) -> None:
        """Each active worktree whose folder is gone from its archive or branch at origin; each hibernated one
        whose archive is gone from origin's copy; what cannot come back is marked destroyed, and its
        conversations told once."""
        rows = await self.pool.fetch(
            """SELECT id, branch_name, working_path, status, archive_ref FROM isolation_environments
               WHERE codebase_id = $1 AND status IN ('active', 'hibernated') ORDER BY created_at""", codebase.id)
        for row in rows:
            environment_id, branch = str(row["id"]), row["branch_name"]
            ref = row["archive_ref"] or archive_ref(environment_id)
            if row["status"] == "hibernated":
                if await self._archive_here(codebase, ref):
                    continue
                note = "its archive was only on that disk"
            else:
                path = self._path(codebase, row["working_path"], branch)
                placed = await self.placer.place(codebase, path, branch, ref)
                if placed.outcome == "already":
                    continue
                if placed.outcome != "lost":
                    await self._tell(environment_id, "recreated",
                                     recreated(self.settings.host, branch, from_archive=placed.outcome == "archive"))
                    log.warning("worktree %s of %s put back from origin's %s", path, codebase.name, placed.outcome)
                    continue
                note = placed.note
            await self.retire_lost(environment_id, codebase, branch, note)

    async def retire_lost(self, environment_id: str, codebase: Codebase, branch: str, note: str) -> None:
        """Nothing of it is left: marked destroyed, its conversations told once, its workflow ended."""
        log.warning("worktree %s of %s lost with the disk of %s: %s", branch, codebase.name, self.settings.host, note)
        await self._tell(environment_id, "lost", lost_with_disk(self.settings.host, branch, note))
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(
                """UPDATE isolation_environments SET status = 'destroyed', destroyed_at = coalesce(destroyed_at, now()),
                          removal_reason = $2 WHERE id = $1 AND status IN ('active', 'hibernated')""",
                environment_id, f"lost with the disk of {self.settings.host}")
            await connection.execute("UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE environment_id = $1",
                                     environment_id)
            await connection.execute("DELETE FROM port_allocations WHERE environment_id = $1", environment_id)
        if self.client is not None:
            try:  # its workflow finds the folder gone and ends
                await self.client.get_workflow_handle(environment_workflow_id(environment_id)).signal(
                    "destroy", DestroyRequest(force=True, reason="path gone", key=f"lost:{environment_id}"))
            except Exception as error:  # noqa: BLE001 - none running: nothing to end
                log.info("environment %s has no workflow to end: %s", environment_id, error)

    async def _archive_here(self, codebase: Codebase, ref: str) -> bool:
        repository = Path(codebase.canonical_path)
        async with host_lock(self.settings.worktree_base, repository):
            store = await archive_store(repository)
            found = await store.git("rev-parse", "--verify", "--quiet", ref, check=False)
            return found.returncode == 0 or await fetch_pushed_archive(
                repository, ref, push_token(self.settings)) is not None

    def _path(self, codebase: Codebase, recorded: str, branch: str) -> Path:
        try:
            return ensure_inside(self.settings.worktree_base, Path(recorded))
        except UnsafePathError:  # adopted from elsewhere: put back where the service puts its own
            return worktree_path(self.settings.worktree_base, codebase.name, branch)

    async def _tell(self, environment_id: str, what: str, text: str) -> None:
        rows = await self.pool.fetch(
            "SELECT platform, platform_conversation_id FROM conversations WHERE environment_id = $1", environment_id)
        for row in rows:
            await self.replies.deliver_once(ReplyInput(
                row["platform"], row["platform_conversation_id"], text,
                f"disk:{what}:{environment_id}:{row['platform']}:{row['platform_conversation_id']}"))

    async def _record(self, codebase: Codebase, state: str | None, note: str) -> None:
        await self.pool.execute(
            "UPDATE codebases SET checkout_state = $2, checkout_note = $3, checkout_changed_at = now() WHERE id = $1",
            codebase.id, state, note)

    async def _lost(self, codebase: Codebase, note: str) -> None:
        await self._record(codebase, "lost", note)
        raise ApplicationError(f"Codebase `{codebase.name}` on {self.settings.host}: {note}.", type=CHECKOUT_LOST,
                               non_retryable=True)
