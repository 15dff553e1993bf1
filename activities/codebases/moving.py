"""Moving a codebase to another host: what the move workflow (workflows/move.py) asks of the database and
of the two hosts.

The old host, while it answers, archives each worktree as it is (uncommitted and untracked files
included) and pushes the archive to origin under `refs/isolator/archive/<id>`; the new host, after its
clone, puts each worktree back from that archive (or, when the old host is down, from the archive
ARCHIVE_PUSH left at origin, else from its branch there: activities/codebases/placing.py). Then the rows
move (the codebase's host and checkout, each worktree's path), each environment's workflow is told its new
place, and each conversation is told once where its worktree is now, or that it could not come.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

import asyncpg
from temporalio import activity
from temporalio.client import Client

from activities.chat.replies import ReplyActivities
from activities.codebases.placing import WorktreePlacer
from activities.codebases.relocation_texts import lost_in_move, moved
from activities.database import codebase_from_row
from activities.git.host_locks import host_lock, host_locks
from activities.git.paths import UnsafePathError, worktree_path
from activities.git.runner import run_git
from activities.providers.worktree.archive import archive_ref
from activities.providers.worktree.archive_push import fetch_pushed_archive, push_archive, push_token, save_and_push
from activities.providers.worktree.archive_store import archive_store
from activities.providers.worktree.creation import is_healthy_worktree
from isolator.contracts.environment import DestroyRequest, environment_workflow_id
from isolator.contracts.message import ReplyInput
from isolator.contracts.move import (
    EnvironmentMoved,
    Exported,
    ExportRequest,
    Imported,
    ImportReport,
    ImportRequest,
    MoveAbandoned,
    MoveFinish,
    MovePlan,
    MoveRequest,
    MovingEnvironment,
)
from isolator.settings import Settings

log = logging.getLogger(__name__)


class MoveActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, client: Client | None = None,
                 replies: ReplyActivities | None = None) -> None:
        self.settings, self.pool, self.client = settings, pool, client
        self.replies = replies or ReplyActivities(pool)

    def shared_steps(self) -> list[Callable[..., Any]]:
        """The local activities of the move's workflow, on the shared queue."""
        return [self.begin_move, self.finish_move, self.abandon_move]

    def host_steps(self) -> list[Callable[..., Any]]:
        """What the old and the new host serve on their queues."""
        return [self.export_worktrees, self.import_worktrees, self.release_worktrees]

    @activity.defn
    async def begin_move(self, request: MoveRequest) -> MovePlan:
        """The codebase and what of it moves; marked `moving` on the hosts and codebase pages."""
        row = await self.pool.fetchrow("SELECT * FROM codebases WHERE id::text = $1", request.codebase_id)
        if row is None:
            return MovePlan(None, problem=f"no codebase {request.codebase_id}")
        codebase = codebase_from_row(row)
        if codebase.host == request.host:
            return MovePlan(codebase, problem=f"`{codebase.name}` is on {request.host} already")
        if not codebase.repository_url:
            return MovePlan(codebase, problem=f"`{codebase.name}` has no URL to clone it from on {request.host}")
        await self.pool.execute(
            "UPDATE codebases SET checkout_state = 'moving', checkout_note = $2, checkout_changed_at = now() "
            "WHERE id = $1", row["id"], f"moving from {codebase.host} to {request.host}")
        rows = await self.pool.fetch(
            """SELECT id, branch_name, working_path, status, archive_ref FROM isolation_environments
               WHERE codebase_id = $1 AND status IN ('active', 'hibernated') ORDER BY created_at""", row["id"])
        return MovePlan(codebase, [
            MovingEnvironment(str(env["id"]), env["branch_name"], env["working_path"], env["status"],
                              env["archive_ref"] or archive_ref(str(env["id"]))) for env in rows])

    @activity.defn
    async def abandon_move(self, abandoned: MoveAbandoned) -> None:
        """The move stopped before anything moved (the new host could not clone): no longer `moving`; why, kept."""
        await self.pool.execute(
            "UPDATE codebases SET checkout_state = NULL, checkout_note = $2, checkout_changed_at = now() "
            "WHERE id::text = $1 AND checkout_state = 'moving'", abandoned.codebase_id, abandoned.reason)

    @activity.defn
    async def export_worktrees(self, request: ExportRequest) -> list[Exported]:
        """On the old host: each worktree archived as it is and pushed to origin; a hibernated one's archive pushed."""
        repository, token = Path(request.codebase.canonical_path), push_token(self.settings)
        exported = []
        for environment in request.environments:
            path = Path(environment.working_path)
            if environment.status == "active" and is_healthy_worktree(path):
                async with host_locks(self.settings.worktree_base, path, repository):
                    _, problem = await save_and_push(path, environment.id, environment.branch, token)
            else:
                async with host_lock(self.settings.worktree_base, repository):
                    problem = await push_archive(repository, environment.archive_ref, token)
            exported.append(Exported(environment.id, problem is None, problem or ""))
        return exported

    @activity.defn
    async def release_worktrees(self, request: ExportRequest) -> None:
        """On the old host, once the rows moved: its worktrees go (each archived here and at origin by the
        export), so a later move back finds none of these stale copies. The checkout and its archives stay."""
        repository = Path(request.codebase.canonical_path)
        for environment in request.environments:
            path = Path(environment.working_path)
            if environment.status != "active" or not is_healthy_worktree(path):
                continue
            async with host_locks(self.settings.worktree_base, path, repository):
                removed = await run_git("worktree", "remove", "--force", "--force", "--", str(path), cwd=repository,
                                        check=False)
            if removed.returncode != 0:
                log.warning("moved worktree %s left on %s: %s", path, self.settings.host, removed.stderr.strip())

    @activity.defn
    async def import_worktrees(self, request: ImportRequest) -> ImportReport:
        """On the new host, after its clone: each worktree put back from origin (archive, else branch); a
        hibernated one keeps its archive, fetched from origin, to be woken here."""
        placer, base = WorktreePlacer(self.settings), self.settings.worktree_base
        repository = Path(request.codebase.canonical_path)
        report = ImportReport(str(base))
        for environment in request.environments:
            try:
                path = worktree_path(base, request.codebase.name, environment.branch)
            except UnsafePathError as error:
                report.environments.append(Imported(environment.id, "lost", environment.working_path, str(error)))
                continue
            if environment.status == "hibernated":
                async with host_lock(base, repository):
                    store = await archive_store(repository)
                    here = (await store.git("rev-parse", "--verify", "--quiet", environment.archive_ref,
                                            check=False)).returncode == 0
                    here = here or await fetch_pushed_archive(repository, environment.archive_ref,
                                                              push_token(self.settings)) is not None
                report.environments.append(Imported(environment.id, "archive" if here else "lost", str(path),
                                                    "" if here else "its archive never reached origin"))
                continue
            placed = await placer.place(request.codebase, path, environment.branch, environment.archive_ref)
            report.environments.append(Imported(environment.id, placed.outcome, str(path), placed.note))
        return report

    @activity.defn
    async def finish_move(self, finish: MoveFinish) -> None:
        """The rows moved in one transaction; then each environment's workflow told its place, and each
        conversation told once."""
        old, new = finish.old, finish.new
        placed = [env for env in finish.report.environments if env.outcome != "lost"]
        lost = [env for env in finish.report.environments if env.outcome == "lost"]
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(
                """UPDATE codebases SET host = $2, canonical_path = $3, checkout_state = 'moved', checkout_note = $4,
                          checkout_changed_at = now() WHERE id = $1""",
                old.id, new.host, new.canonical_path,
                f"moved from {old.host} (checkout `{old.canonical_path}`, left there) to {new.host}")
            for env in placed:
                await connection.execute("UPDATE isolation_environments SET working_path = $2 WHERE id = $1",
                                         env.environment_id, env.working_path)
                await connection.execute("UPDATE conversations SET cwd = $2 WHERE environment_id = $1",
                                         env.environment_id, env.working_path)
            for env in lost:
                await connection.execute(
                    """UPDATE isolation_environments SET status = 'destroyed', destroyed_at = coalesce(destroyed_at, now()),
                              removal_reason = $2 WHERE id = $1 AND status IN ('active', 'hibernated')""",
                    env.environment_id, f"lost in the move to {new.host}")
                await connection.execute("DELETE FROM port_allocations WHERE environment_id = $1", env.environment_id)
            # Removed ones can be restored on the new host (from origin's archive): their place is there now.
            await connection.execute(
                """UPDATE isolation_environments
                   SET working_path = $2 || '/' || $3 || '/' || replace(branch_name, '/', '-')
                   WHERE codebase_id = $1 AND status = 'destroyed' AND archive_ref IS NOT NULL""",
                old.id, finish.report.worktree_base.rstrip("/"), new.name)
            await connection.execute("DELETE FROM warm_worktrees WHERE codebase_id = $1", old.id)
        for env in finish.report.environments:
            await self._tell_workflow(finish, env)
            branch = await self.pool.fetchval("SELECT branch_name FROM isolation_environments WHERE id = $1",
                                              env.environment_id)
            text = (moved(new.name, old.host, new.host, branch, env.outcome) if env.outcome != "lost"
                    else lost_in_move(new.name, old.host, new.host, branch, env.note))
            await self._tell(env.environment_id, text, finish.key, forget=env.outcome == "lost")
        log.warning("codebase %s moved from %s to %s: %d worktree(s) there, %d lost", new.name, old.host, new.host,
                    len(placed), len(lost))

    async def _tell_workflow(self, finish: MoveFinish, env: Imported) -> None:
        if self.client is None:
            return
        handle = self.client.get_workflow_handle(environment_workflow_id(env.environment_id))
        try:
            if env.outcome == "lost":
                await handle.signal("destroy", DestroyRequest(force=True, reason="path gone",
                                                              key=f"{finish.key}:{env.environment_id}"))
            else:
                await handle.signal("moved", EnvironmentMoved(finish.new, env.working_path,
                                                              f"{finish.key}:{env.environment_id}"))
        except Exception as error:  # noqa: BLE001 - none running: the next message starts it with the new rows
            log.info("environment %s has no workflow to tell of the move: %s", env.environment_id, error)

    async def _tell(self, environment_id: str, text: str, key: str, forget: bool) -> None:
        rows = await self.pool.fetch(
            "SELECT id, platform, platform_conversation_id FROM conversations WHERE environment_id = $1", environment_id)
        for row in rows:
            await self.replies.deliver_once(ReplyInput(
                row["platform"], row["platform_conversation_id"], text,
                f"{key}:{environment_id}:{row['platform']}:{row['platform_conversation_id']}"))
        if forget:  # its next message starts a new worktree
            await self.pool.execute("UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE environment_id = $1",
                                    environment_id)
