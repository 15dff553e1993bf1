"""Codebase activities: finding and recording rows (local), inspecting and cloning (host queue)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import asyncpg
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.database import codebase_from_row
from activities.git.paths import UnsafePathError, ensure_inside, is_valid_codebase_name
from activities.git.runner import GitError, run_git
from activities.warm.pool import ask_refill, pool_size
from isolator.repositories import local_folder_of, name_from_source, normalize_repository_url, repository_url_of
from isolator.contracts.codebase import (
    Codebase,
    RegisteredCodebase,
    RepositoryInfo,
    RepositorySource,
)
from isolator.contracts.errors import INVALID_REPOSITORY, NAME_TAKEN
from isolator.settings import Settings

log = logging.getLogger(__name__)


def _invalid(message: str) -> ApplicationError:
    return _mistake(message, INVALID_REPOSITORY)


def _mistake(message: str, error_type: str) -> ApplicationError:
    """The user's mistake: not retried, and benign, so the worker logs no traceback for it."""
    return ApplicationError(message, type=error_type, non_retryable=True, category=ApplicationErrorCategory.BENIGN)


class CodebaseActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool | None = None, client: Client | None = None) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client  # starts a new codebase's warm pool

    @activity.defn
    async def find_codebase(self, source: RepositorySource) -> Codebase | None:
        """By URL, by path on its host, or (given a name alone: `/clone <name>`) by name."""
        assert self.pool is not None
        if source.name and not source.url and not source.path:
            row = await self.pool.fetchrow("SELECT * FROM codebases WHERE name = $1", source.name)
            return codebase_from_row(row) if row else None
        if source.url:
            row = await self.pool.fetchrow(
                "SELECT * FROM codebases WHERE repository_url = $1", repository_url_of(source.url)
            )
            if row:
                return codebase_from_row(row)
        # A `file://` URL names a folder on the host: the checkout registered by that path is the same repository.
        for place in (source.path, local_folder_of(source.url) if source.url else None):
            if not place:
                continue
            path = str(Path(place).expanduser().absolute())
            row = await self.pool.fetchrow(
                "SELECT * FROM codebases WHERE host = $1 AND canonical_path = $2", source.host, path
            )
            if row:
                return codebase_from_row(row)
        return None

    @activity.defn
    async def record_codebase(self, info: RepositoryInfo) -> RegisteredCodebase:
        registered = await self._record(info)
        if registered.created and registered.codebase is not None:
            await self._start_warm_pool(registered.codebase)
        return registered

    async def _start_warm_pool(self, codebase: Codebase) -> None:
        """A new codebase's warm worktrees are made from its registration on, whoever registered it (the
        API, `/clone` in a chat, an event from its repository), not from its first create."""
        assert self.pool is not None
        if self.client is None or not await pool_size(self.pool, self.settings, codebase.id):
            return
        try:
            await ask_refill(self.client, self.settings, codebase)
        except Exception as error:  # noqa: BLE001 - the first claim (or the worker's start) asks again
            log.warning("could not start the warm pool of %s: %s", codebase.name, error)

    async def _record(self, info: RepositoryInfo) -> RegisteredCodebase:
        assert self.pool is not None
        async with self.pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                """INSERT INTO codebases (name, repository_url, canonical_path, default_branch, host, registered_by)
                   VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING *""",
                info.name, info.repository_url, info.canonical_path, info.default_branch, info.host,
                info.registered_by,
            )
            if row is not None:
                return RegisteredCodebase(codebase=codebase_from_row(row), created=True)
            row = await connection.fetchrow(
                """SELECT * FROM codebases
                   WHERE (repository_url IS NOT NULL AND repository_url = $1) OR (host = $2 AND canonical_path = $3)""",
                info.repository_url, info.host, info.canonical_path,
            )
            if row is not None:
                ours = info.registered_by is not None and row["registered_by"] == info.registered_by
                return RegisteredCodebase(codebase=codebase_from_row(row), created=ours)
        raise _mistake(
            f"A different repository is already registered as `{info.name}`. Choose another name.", NAME_TAKEN
        )

    @activity.defn
    async def list_codebases(self) -> list[Codebase]:
        assert self.pool is not None
        rows = await self.pool.fetch("SELECT * FROM codebases ORDER BY name")
        return [codebase_from_row(row) for row in rows]

    @activity.defn
    async def inspect_repository(self, source: RepositorySource) -> RepositoryInfo:
        """Check that `source.path` is a usable git checkout and describe its main checkout."""
        if not source.path:
            raise _invalid("a path is required")
        path = Path(source.path).expanduser().absolute()
        if not path.is_dir():
            raise _invalid(f"`{source.path}` is not a directory on {self.settings.host}.")
        info = await self._describe(path, source.url, source.name, source.host)
        if source.allowed_roots is not None and not _under_any(Path(info.canonical_path), source.allowed_roots):
            # A link, or a worktree of a checkout elsewhere, leads out of the folders chat may name.
            raise _invalid(f"`{source.path}` leads to `{info.canonical_path}`, outside `CLONE_ALLOWED_ROOTS`.")
        return info

    @activity.defn
    async def clone_repository(self, source: RepositorySource) -> RepositoryInfo:
        """Clone `source.url` into `WORKSPACE_PATH/<name>`."""
        if not source.url:
            raise _invalid("a clone URL is required")
        name = self._name(source.name, source.url, None)
        workspace = self.settings.workspace_path
        workspace.mkdir(parents=True, exist_ok=True)
        try:
            destination = ensure_inside(workspace, workspace / name)
            staging = ensure_inside(workspace, workspace / f".{name}.cloning")
        except UnsafePathError as error:
            raise _invalid(str(error)) from None
        if destination.exists():
            origin = await run_git("remote", "get-url", "origin", cwd=destination, check=False)
            if origin.returncode == 0 and normalize_repository_url(origin.stdout) == normalize_repository_url(source.url):
                return await self._describe(destination, source.url, name, source.host)
            raise _mistake(
                f"`{destination}` already exists and is not a clone of {source.url}. Choose another name.", NAME_TAKEN
            )
        if self.pool is not None and await self.pool.fetchval(
            """SELECT 1 FROM codebases WHERE name = $1 AND repository_url IS DISTINCT FROM $2
               AND NOT (host = $3 AND canonical_path = $4)""",
            name, repository_url_of(source.url), source.host, str(destination),
        ):
            # record_codebase would refuse this name afterwards and leave the clone behind: refuse first.
            raise _mistake(
                f"A different repository is already registered as `{name}`. Choose another name.", NAME_TAKEN
            )
        shutil.rmtree(staging, ignore_errors=True)  # left by an attempt that was killed
        try:
            await self._clone(source.url, staging)
            staging.rename(destination)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # only there if the clone failed
        return await self._describe(destination, source.url, name, source.host)

    @staticmethod
    async def _clone(url: str, destination: Path) -> None:
        """The worker heartbeats for the activity while git runs (workers/interceptors.py)."""
        try:
            await run_git("clone", "--quiet", "--", url, str(destination))
        except GitError as error:
            raise _invalid(f"Could not clone {url}: {error.stderr or 'git clone failed'}") from None

    def _name(self, name: str | None, url: str | None, path: str | None) -> str:
        chosen = name or name_from_source(url, path)
        if not is_valid_codebase_name(chosen):
            raise _invalid(
                f"`{chosen}` is not a usable codebase name: use letters, digits, `.`, `_` and `-` (at most 100)."
            )
        return chosen

    async def _describe(self, path: Path, url: str | None, name: str | None, host: str) -> RepositoryInfo:
        result = await run_git(
            "rev-parse", "--path-format=absolute", "--git-common-dir", "--is-bare-repository", cwd=path, check=False
        )
        if result.returncode != 0:
            raise _invalid(f"`{path}` is not a git repository.")
        common_dir, bare = result.stdout.splitlines()[:2]
        if bare == "true":
            raise _invalid(f"`{path}` is a bare repository; register a checkout with a working tree.")
        canonical = Path(common_dir).resolve().parent  # a worktree resolves to its main checkout
        top = await run_git("rev-parse", "--show-toplevel", cwd=path, check=False)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != path.resolve():
            # Registering it would register the whole repository, under a name the user did not expect.
            raise _invalid(f"`{path}` is a folder inside the repository `{canonical}`; "
                           f"give the repository's root `{canonical}`.")
        if canonical.is_relative_to(self.settings.worktree_base.resolve()):
            raise _invalid(f"`{path}` lies inside the worktree base; register the main checkout instead.")
        if (await run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=canonical, check=False)).returncode != 0:
            raise _invalid(f"`{canonical}` has no commits yet; commit something first.")
        if url is None:
            origin = await run_git("remote", "get-url", "origin", cwd=canonical, check=False)
            url = origin.stdout.strip() if origin.returncode == 0 else None
        return RepositoryInfo(
            name=self._name(name, url, str(canonical)),
            canonical_path=str(canonical),
            default_branch=await _default_branch(canonical),
            repository_url=repository_url_of(url, canonical) if url else None,
            host=host,
        )



def registered_elsewhere(existing: Codebase, host: str | None, name: str | None) -> str | None:
    """Why a registration that found `existing` must not answer with it: the request named another host
    (or another name) for the same repository. None: it is the same registration again."""
    where = f"`{existing.repository_url or existing.canonical_path}` is registered already, as `{existing.name}` " \
            f"on {existing.host} (at `{existing.canonical_path}`)"
    if host is not None and host != existing.host:
        return (f"{where}. To move it to {host}, with its worktrees' work: POST /api/codebases/{existing.id}/move "
                f'{{"host": "{host}"}} (or the Move button on its dashboard page).')
    if name is not None and name != existing.name:
        return f"{where}. A codebase keeps its name: register it without `name`, or as `{existing.name}`."
    return None

def _under_any(path: Path, roots: list[str]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(Path(root).resolve()) for root in roots)


async def _default_branch(repository: Path) -> str:
    """The remote's default branch when it is checked out locally, else the current branch."""
    remote_head = await run_git("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", cwd=repository, check=False)
    if remote_head.returncode == 0:
        branch = remote_head.stdout.strip().removeprefix("origin/")
        local = await run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repository, check=False)
        if local.returncode == 0:
            return branch
    current = await run_git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=repository, check=False)
    if current.returncode == 0:
        return current.stdout.strip()
    commit = await run_git("rev-parse", "HEAD", cwd=repository)
    return commit.stdout.strip()
