"""Refilling a codebase's warm pool, on the codebase's host (docs/warm.md).

One refill at a time per codebase (a host lock). It first clears what a killed refill left (rows
`making`, `refreshing` or `removing`, folders no row knows), then brings every ready worktree to the
fresh base (setting it up again only when one of the set-up's inputs changed), rebuilds the ones whose
set-up failed, and makes new ones up to the pool's size, within DISK_BUDGET_GB. Every worktree is
recorded (`making`) before anything is made on disk, so nothing made is ever lost track of. A refill
for a codebase deleted meanwhile removes the warm worktrees it left and answers size 0: its pool ends.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from datetime import timedelta
from pathlib import Path

import asyncpg
from temporalio import activity

from activities.git.disk_usage import disk_usage
from activities.git.host_locks import host_lock
from activities.environments.ports import allocate_block, held_block
from activities.git.runner import GitError, commits_of
from activities.providers.worktree.base import config_at_commit, fresh_base
from activities.providers.worktree.warm import WarmDisk, sets_up_warm, setup_digest, warm_root
from activities.warm.pool import pool_size
from isolator.contracts.repository import PortBlock, RepositoryConfig
from isolator.contracts.warm import RefillReport, WarmBudgetInput, WarmPoolInput
from isolator.repository_config import read_setup
from isolator.settings import Settings

log = logging.getLogger(__name__)
# A warm worktree whose set-up failed is rebuilt when the base or the set-up changes, or after this long.
REBUILD_FAILED_AFTER = timedelta(minutes=10)
# A claim not finished within this long was given up (its message failed for good): its leftovers go.
CLAIM_ABANDONED_AFTER = timedelta(hours=1)
MEASURE_SECONDS = 5.0


class WarmRefillActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    @activity.defn
    async def refill_warm_pool(self, request: WarmPoolInput) -> RefillReport:
        if not await self.pool.fetchval("SELECT EXISTS (SELECT 1 FROM codebases WHERE id = $1)", request.codebase.id):
            return await self._clear_deleted(request)
        try:
            return await self._refill(request)
        except asyncpg.ForeignKeyViolationError:  # the codebase was deleted while this refill ran
            return await self._clear_deleted(request)
        except (GitError, OSError) as error:  # a checkout gone or broken: tried again at the next refill
            log.warning("warm pool of %s could not be refilled: %s", request.codebase.name, error)
            return RefillReport(await pool_size(self.pool, self.settings, request.codebase.id), problems=[str(error)])

    async def _refill(self, request: WarmPoolInput) -> RefillReport:
        codebase = request.codebase
        base_folder = self.settings.worktree_base
        root = warm_root(base_folder, codebase.name)
        size = await pool_size(self.pool, self.settings, codebase.id)
        report = RefillReport(size)
        disk = WarmDisk(base_folder, Path(codebase.canonical_path))
        async with host_lock(base_folder, root):
            await self._clear_leftovers(codebase.id, root, disk, report)
            base = await fresh_base(base_folder, disk.repository, codebase.default_branch,
                                    self.settings.fetch_interval_seconds)
            [commit] = await commits_of(disk.repository, base.revision)
            setup = read_setup(await config_at_commit(disk.repository, commit) if commit else None)
            if setup.problem is not None or commit is None:
                size = 0  # a create reports the problem; nothing warm can be made from it
                report.problems.append(setup.problem.describe() if setup.problem else "no base commit")
            digest = setup_digest(setup.config)
            kept = 0
            for row in await self._rows(codebase.id, "ready", "failed"):
                if row["state"] == "failed":
                    if row["base_commit"] == commit and row["setup_digest"] == digest and kept < size \
                            and row["updated_at"] > await self._now() - REBUILD_FAILED_AFTER:
                        report.problems.append(f"warm set-up failed: {row['failure']}")
                        kept += 1  # its place is not refilled until it is rebuilt
                        continue
                    await self._remove(row, disk, report, states=("failed",))
                elif kept >= size:
                    await self._remove(row, disk, report, states=("ready",))
                elif await self._bring_up_to_date(row, commit, setup.config, digest, disk, report):
                    kept += 1
            while kept < size and not report.problems:
                if not await self._within_budget(codebase.id):
                    report.problems.append("DISK_BUDGET_GB is reached: warm worktrees wait for room")
                    break
                await self._make(codebase.id, root, commit, setup.config, digest, disk, report)  # type: ignore[arg-type]
                kept += 1
            await self._trim_to_budget(codebase.id, disk, report)
        report.ready = await self.pool.fetchval(
            "SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1 AND state = 'ready'", codebase.id)
        if report.problems:
            log.warning("warm pool of %s is short: %s", codebase.name, "; ".join(report.problems))
        return report

    @activity.defn
    async def trim_warm_pool(self, request: WarmBudgetInput) -> int:
        """Over the budget, warm worktrees are the first to go; the bytes of those that stay."""
        codebase = request.codebase
        disk = WarmDisk(self.settings.worktree_base, Path(codebase.canonical_path))
        report = RefillReport(0)
        async with host_lock(self.settings.worktree_base, warm_root(self.settings.worktree_base, codebase.name)):
            rows = await self._rows(codebase.id, "ready", "failed")
            warm = sum(row["disk_bytes"] or 0 for row in rows)
            for row in sorted(rows, key=lambda row: row["state"] != "failed"):  # a failed one first
                if request.environments_bytes + warm <= request.budget_bytes:
                    break
                await self._remove(row, disk, report, states=("ready", "failed"))
                warm -= row["disk_bytes"] or 0
        if report.removed:
            log.info("disk budget of %s: %d warm worktree(s) removed first", codebase.name, report.removed)
        return warm

    async def _clear_leftovers(self, codebase_id: str, root: Path, disk: WarmDisk, report: RefillReport) -> None:
        """What a killed refill (or an abandoned claim) left: removed, rows and folders."""
        for row in await self._rows(codebase_id, "making", "refreshing", "removing"):
            await self._remove(row, disk, report, states=("making", "refreshing", "removing"))
        for row in await self._rows(codebase_id, "claimed"):
            if row["updated_at"] < await self._now() - CLAIM_ABANDONED_AFTER:
                await self._remove(row, disk, report, states=("claimed",))
        await self._remove_unrecorded(root, disk, report)

    async def _clear_deleted(self, request: WarmPoolInput) -> RefillReport:
        """The codebase was deleted, and its rows with it: the warm worktrees it left go from the disk and
        from git's list, and the pool ends (size 0)."""
        codebase = request.codebase
        root = warm_root(self.settings.worktree_base, codebase.name)
        report = RefillReport(0)
        async with host_lock(self.settings.worktree_base, root):
            await self._remove_unrecorded(root, WarmDisk(self.settings.worktree_base, Path(codebase.canonical_path)),
                                          report)
            with contextlib.suppress(OSError):
                root.rmdir()  # empty unless a codebase registered again under its name has a pool
        log.info("warm pool of %s ended: the codebase was deleted (%d warm worktree(s) removed)", codebase.name,
                 report.removed)
        return report

    async def _remove_unrecorded(self, root: Path, disk: WarmDisk, report: RefillReport) -> None:
        """Folders no row records: a killed refill's, or a deleted codebase's. Rows of any codebase count: one
        registered again under the same name (the same folder) keeps its own."""
        if not root.is_dir():
            return
        known = {Path(row["path"]) for row in await self.pool.fetch(
            "SELECT path FROM warm_worktrees WHERE starts_with(path, $1)", f"{root}/")}
        for folder in root.iterdir():
            if folder not in known:
                await disk.remove(folder)
                report.removed += 1

    async def _bring_up_to_date(self, row: asyncpg.Record, commit: str | None, config: RepositoryConfig,
                                digest: str, disk: WarmDisk, report: RefillReport) -> bool:
        """At the fresh base, set up for it; False when it was claimed meanwhile or had to go."""
        if row["base_commit"] == commit and row["setup_digest"] == digest:
            return True
        taken = await self.pool.fetchrow(
            "UPDATE warm_worktrees SET state = 'refreshing', updated_at = now() WHERE id = $1 AND state = 'ready' "
            "RETURNING *", row["id"])
        if taken is None:
            return False  # a create claimed it first
        path = Path(row["path"])
        if row["setup_digest"] != digest:  # the set-up itself changed: made again from scratch
            await self._remove(taken, disk, report, states=("refreshing",))
            return False
        try:
            await disk.move_to(path, commit, config)  # type: ignore[arg-type]
            again = row["setup_ran"] and await disk.inputs_changed(row["base_commit"], commit, config.setup_inputs)
            failure = await disk.set_up(path, config, await self._ports(row["id"], config)) if again else None
        except (GitError, OSError) as error:
            await self._remove(taken, disk, report, states=("refreshing",))
            report.problems.append(f"could not bring a warm worktree to the base: {error}")
            return False
        report.refreshed += 1
        report.set_up_again += 1 if again else 0
        await self._settle(row["id"], commit, row["setup_ran"], failure, path)
        return failure is None

    async def _make(self, codebase_id: str, root: Path, commit: str, config: RepositoryConfig, digest: str,
                    disk: WarmDisk, report: RefillReport) -> None:
        path = root / uuid.uuid4().hex[:12]
        warm_id = await self.pool.fetchval(
            "INSERT INTO warm_worktrees (codebase_id, path, state, base_commit, setup_digest) "
            "VALUES ($1, $2, 'making', $3, $4) RETURNING id", codebase_id, str(path), commit, digest)
        try:
            await disk.make(path, commit, config)
            warm = sets_up_warm(config, path)
            failure = await disk.set_up(path, config, await self._ports(warm_id, config)) if warm else None
        except (GitError, OSError) as error:
            await disk.remove(path)
            failure, warm = f"could not be made: {error}", False
        report.made += 1
        if failure is not None:
            report.problems.append(f"warm set-up failed: {failure}")
        await self._settle(warm_id, commit, warm, failure, path)

    async def _ports(self, warm_id: object, config: RepositoryConfig) -> PortBlock | None:
        """The warm worktree's block, taken before its first set-up: what the set-up writes of it (a `.env`)
        stays true for the environment that claims it, which takes the block over."""
        if not config.ports:
            return None
        held = await held_block(self.pool, "warm_worktree_id", warm_id)
        return held or await allocate_block(self.pool, self.settings, "warm_worktree_id", warm_id, config.ports)

    async def _settle(self, warm_id: object, commit: str, setup_ran: bool, failure: str | None, path: Path) -> None:
        size, _ = disk_usage(path, MEASURE_SECONDS) if path.is_dir() else (0, True)
        await self.pool.execute(
            "UPDATE warm_worktrees SET state = $2, base_commit = $3, setup_ran = $4, failure = $5, disk_bytes = $6, "
            "updated_at = now() WHERE id = $1", warm_id, "ready" if failure is None else "failed", commit, setup_ran,
            failure, size)

    async def _remove(self, row: asyncpg.Record, disk: WarmDisk, report: RefillReport, states: tuple[str, ...]) -> None:
        """Marked `removing` first (a claim can no longer take it), then gone from disk, then the row."""
        taken = await self.pool.fetchrow(
            "UPDATE warm_worktrees SET state = 'removing', updated_at = now() WHERE id = $1 AND state = ANY($2::text[]) "
            "RETURNING id", row["id"], list(states))
        if taken is None:
            return
        await disk.remove(Path(row["path"]))
        await self.pool.execute("DELETE FROM warm_worktrees WHERE id = $1", row["id"])
        report.removed += 1

    async def _within_budget(self, codebase_id: str) -> bool:
        """One more warm worktree (as large as the last) still fits in DISK_BUDGET_GB with the environments."""
        budget = self.settings.disk_budget_gb
        if budget is None:
            return True
        used, largest = await self._usage(codebase_id)
        return used + largest <= budget * 1024 ** 3

    async def _trim_to_budget(self, codebase_id: str, disk: WarmDisk, report: RefillReport) -> None:
        """Over DISK_BUDGET_GB, warm worktrees are the first to go."""
        budget = self.settings.disk_budget_gb
        if budget is None:
            return
        used, _ = await self._usage(codebase_id)
        for row in await self._rows(codebase_id, "ready", "failed"):
            if used <= budget * 1024 ** 3:
                return
            await self._remove(row, disk, report, states=("ready", "failed"))
            used -= row["disk_bytes"] or 0

    async def _usage(self, codebase_id: str) -> tuple[int, int]:
        row = await self.pool.fetchrow(
            "SELECT (SELECT coalesce(sum(disk_bytes), 0) FROM isolation_environments WHERE codebase_id = $1 "
            "AND status = 'active') + (SELECT coalesce(sum(disk_bytes), 0) FROM warm_worktrees WHERE codebase_id = $1)"
            # a warm worktree's size: the largest one's, else (all gone) at least the smallest environment's
            " AS used, coalesce((SELECT max(disk_bytes) FROM warm_worktrees WHERE codebase_id = $1), (SELECT "
            "min(disk_bytes) FROM isolation_environments WHERE codebase_id = $1 AND status = 'active'), 0) AS largest",
            codebase_id)
        return row["used"], row["largest"]

    async def _rows(self, codebase_id: str, *states: str) -> list[asyncpg.Record]:
        return await self.pool.fetch("SELECT * FROM warm_worktrees WHERE codebase_id = $1 AND state = ANY($2::text[]) "
                                     "ORDER BY created_at", codebase_id, list(states))

    async def _now(self):  # noqa: ANN202 - the database's clock, which wrote updated_at
        return await self.pool.fetchval("SELECT now()")
