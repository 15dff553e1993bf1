"""Claiming a warm worktree for a create, and what the pool holds (docs/warm.md).

The claim is decided once, by the database: one UPDATE takes a `ready` row for the create's worktree
path (`claimed_for`, unique), so two messages never get the same warm worktree, and a retry after a
crash (same path) finds its own claim and finishes it. The disk work is idempotent
(activities/providers/worktree/warm.py). Whatever stops a claim gives the worktree back to the pool
and answers `none`: the create then makes one as before, and the reason is logged.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncpg
from temporalio import activity
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities.database import codebase_from_row
from activities.environments.ports import hand_over_block
from activities.git.host_locks import host_lock
from activities.git.paths import UnsafePathError, worktree_path
from activities.git.runner import GitError, commits_of
from activities.providers.worktree.base import config_at_commit, fresh_base
from activities.providers.worktree.removal_records import RemovalRecords
from activities.providers.worktree.warm import WarmDisk, setup_digest
from isolator.contracts.codebase import Codebase
from isolator.contracts.repository import RepositoryConfig, RepositorySetup, WorktreeBase
from isolator.contracts.warm import (
    WarmClaim,
    WarmPoolInput,
    WarmPoolView,
    WarmWorktreeView,
    warm_pool_workflow_id,
)
from isolator.contracts.worktree import WorktreeReady, WorktreeRequest
from isolator.repository_config import read_setup
from isolator.settings import Settings

log = logging.getLogger(__name__)
WARM_POOL_WORKFLOW = "WarmPoolWorkflow"

_TAKE = """
UPDATE warm_worktrees SET state = 'claimed', claimed_for = $2, updated_at = now()
 WHERE id = (SELECT id FROM warm_worktrees WHERE codebase_id = $1 AND state = 'ready'
              ORDER BY base_commit = $3 DESC, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING *"""


async def pool_size(pool: asyncpg.Pool, settings: Settings, codebase_id: str) -> int:
    """The codebase's own size, or WARM_WORKTREES; 0 for a codebase deleted meanwhile (its pool ends)."""
    row = await pool.fetchrow("SELECT warm_worktrees FROM codebases WHERE id = $1", codebase_id)
    if row is None:
        return 0
    return settings.warm_worktrees if row["warm_worktrees"] is None else row["warm_worktrees"]


async def ask_refill(client: Client, settings: Settings, codebase: Codebase) -> None:
    """Wake the codebase's pool workflow, starting it when it is not running."""
    await client.start_workflow(
        WARM_POOL_WORKFLOW, WarmPoolInput(codebase, max(60, settings.fetch_interval_seconds)),
        id=warm_pool_workflow_id(codebase.id), task_queue=settings.task_queue, start_signal="refill",
        static_summary=f"warm worktrees of {codebase.name}",
    )


async def ask_deleted_pool_to_end(client: Client, codebase_id: str) -> None:
    """A deleted codebase's pool: its next refill removes its warm worktrees and ends it, now rather than at
    its next look. A pool that no longer runs has removed them already (it ends only when emptied)."""
    try:
        await client.get_workflow_handle(warm_pool_workflow_id(codebase_id)).signal("refill")
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise


class WarmPoolActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, client: Client | None = None) -> None:
        self.pool = pool
        self.settings = settings
        self.client = client
        self._asking: set[asyncio.Task] = set()

    @activity.defn
    async def claim_warm_worktree_here(self, request: WorktreeRequest) -> WarmClaim:
        """`claim_warm_worktree` as a local activity of the message's worker; "elsewhere" when the codebase
        is on another host."""
        if request.codebase.host != self.settings.host:
            return WarmClaim("elsewhere")
        return await self.claim_warm_worktree(request)

    @activity.defn
    async def claim_warm_worktree(self, request: WorktreeRequest) -> WarmClaim:
        codebase = request.codebase
        if request.source != "default":
            return WarmClaim("none", reason="not a new branch from the default base")
        if await pool_size(self.pool, self.settings, codebase.id) == 0:
            return WarmClaim("none", reason="the pool is off")
        try:
            target = worktree_path(self.settings.worktree_base, codebase.name, request.branch)
        except UnsafePathError:
            return WarmClaim("none", reason="no usable path")  # the create says what is wrong
        async with host_lock(self.settings.worktree_base, target):
            claim = await self._claim(request, target)
        if claim.outcome == "none":
            log.info("no warm worktree for %s of %s (%s): made as before", request.branch, codebase.name, claim.reason)
        if claim.refill:
            self._refill_soon(codebase)
        return claim

    async def _claim(self, request: WorktreeRequest, target: Path) -> WarmClaim:
        codebase = request.codebase
        repository = Path(codebase.canonical_path)
        row = await self.pool.fetchrow("SELECT * FROM warm_worktrees WHERE claimed_for = $1", str(target))
        if row is None and not await self.pool.fetchval(
                "SELECT EXISTS (SELECT 1 FROM warm_worktrees WHERE codebase_id = $1 AND state = 'ready')", codebase.id):
            return await self._empty(codebase.id)  # before any git: a miss costs ~1 ms
        base = await fresh_base(self.settings.worktree_base, repository, codebase.default_branch,
                                self.settings.fetch_interval_seconds)
        commit, existing_branch = await commits_of(repository, base.revision, f"refs/heads/{request.branch}")
        if row is None and (target.exists() or existing_branch is not None):
            return WarmClaim("none", reason="the branch or its folder exists already")
        setup = read_setup(await config_at_commit(repository, commit) if commit else None)
        if row is None:
            if commit is None or setup.problem is not None:
                return WarmClaim("none", reason="no base commit, or `.isolator.toml` has a problem")
            row = await self.pool.fetchrow(_TAKE, codebase.id, str(target), commit)
            if row is None:
                return await self._empty(codebase.id)
            if not await self._usable(row, commit, setup.config, repository):
                await self._release(row["id"], None)
                return WarmClaim("none", reason="the warm worktree's set-up predates a change of its inputs")
            await self.pool.execute("UPDATE warm_worktrees SET base_commit = $2 WHERE id = $1", row["id"], commit)
            start = commit
        else:
            start = row["base_commit"]  # a retry: where the first attempt put it
        disk = WarmDisk(self.settings.worktree_base, repository)
        warm = Path(row["path"])
        try:
            await disk.claim_into(warm, target, request.branch, start, setup.config)
        except (GitError, OSError) as error:
            await disk.give_back(target, warm, request.branch)
            await self._release(row["id"], f"could not be claimed: {error}")
            return WarmClaim("none", reason=f"the claim failed ({error})")
        RemovalRecords(self.settings.worktree_base).forget(target)
        async with self.pool.acquire() as connection, connection.transaction():
            ports = await hand_over_block(connection, row["id"], str(target))
            await connection.execute("DELETE FROM warm_worktrees WHERE id = $1", row["id"])
        return WarmClaim("claimed", WorktreeReady(
            path=str(target), branch=request.branch, created=True, fresh_from=start,
            base=WorktreeBase(codebase.default_branch, start, base.fallback_reason),
            setup=RepositorySetup(config=setup.config, already_run=row["setup_ran"], found=setup.found,
                                  gitmodules=(target / ".gitmodules").is_file(), warm_ports=ports),
            warm=True,
        ))

    async def _usable(self, row: asyncpg.Record, commit: str, config: RepositoryConfig, repository: Path) -> bool:
        """Its set-up still holds at `commit`: made from the same set-up, and at the same base, or one
        where none of the set-up's inputs changed (no set-up ran: any base)."""
        if row["setup_digest"] != setup_digest(config):
            return False
        if row["base_commit"] == commit or not row["setup_ran"]:
            return True
        return not await WarmDisk(self.settings.worktree_base, repository).inputs_changed(
            row["base_commit"], commit, config.setup_inputs)

    async def _release(self, warm_id: object, failure: str | None) -> None:
        """Back to the pool: ready for the refill to bring up to date, or failed (rebuilt)."""
        await self.pool.execute(
            "UPDATE warm_worktrees SET state = $2, claimed_for = NULL, failure = $3, updated_at = now() WHERE id = $1",
            warm_id, "ready" if failure is None else "failed", failure)

    async def _empty(self, codebase_id: str) -> WarmClaim:
        """A miss, and why. The pool is asked to refill only when it has room for another worktree: the
        ones it has are on their way, or failed (rebuilt by its own timer), and asking would only repeat
        its checks beside the create."""
        rows = await self.pool.fetch("SELECT state, failure FROM warm_worktrees WHERE codebase_id = $1", codebase_id)
        failures = [row["failure"] for row in rows if row["state"] == "failed" and row["failure"]]
        busy = [row["state"] for row in rows if row["state"] in ("making", "refreshing")]
        if not failures and not busy:
            return WarmClaim("none", reason="the pool is empty, refilling")
        room = len(rows) < await pool_size(self.pool, self.settings, codebase_id)
        if failures:
            return WarmClaim("none", reason=f"its warm set-up failed: {failures[0]}", refill=room)
        return WarmClaim("none", reason=f"{len(busy)} being made or brought up to date", refill=room)

    def _refill_soon(self, codebase: Codebase) -> None:
        """In the background: the claim's answer does not wait for it (the pool's timer is the backstop)."""
        if self.client is None:
            return
        task = asyncio.create_task(self._ask(codebase))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask(self, codebase: Codebase) -> None:
        try:
            await ask_refill(self.client, self.settings, codebase)  # type: ignore[arg-type]
        except Exception as error:  # noqa: BLE001 - a refill not asked now is asked by the pool's timer
            log.warning("could not ask the warm pool of %s to refill: %s", codebase.name, error)

    @activity.defn
    async def view_warm_pool(self, codebase: Codebase) -> WarmPoolView:
        return await warm_pool_view(self.pool, self.settings, codebase.id)


async def warm_pool_view(pool: asyncpg.Pool, settings: Settings, codebase_id: str) -> WarmPoolView:
    rows = await pool.fetch("SELECT * FROM warm_worktrees WHERE codebase_id = $1 ORDER BY created_at", codebase_id)
    return WarmPoolView(await pool_size(pool, settings, codebase_id), [
        WarmWorktreeView(row["path"], row["state"], row["base_commit"], row["failure"], row["disk_bytes"])
        for row in rows])


async def start_warm_pools(client: Client, pool: asyncpg.Pool, settings: Settings) -> None:
    """At a worker's start: the pool of every codebase on its host is made (or brought up to date)."""
    rows = await pool.fetch(
        "SELECT * FROM codebases WHERE host = $1 AND coalesce(warm_worktrees, $2) > 0", settings.host,
        settings.warm_worktrees)
    for row in rows:
        try:
            await ask_refill(client, settings, codebase_from_row(row))
        except Exception as error:  # noqa: BLE001 - the first claim asks again
            log.warning("could not start the warm pool of %s: %s", row["name"], error)
