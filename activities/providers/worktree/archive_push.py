"""Archives kept at origin too (ARCHIVE_PUSH=true): a lost disk then loses nothing that was archived.

Each archive commit is pushed to origin under its own name, `refs/isolator/archive/<environment id>`
(never a branch: no pull request, no CI sees it), replaced when the same environment is archived again:
a removal, a hibernation, a move, or with ARCHIVE_PUSH the checkpoint after every agent run. The commit's
first parent is its branch's commit, so the branch's history travels with it.

Where the local archive is gone (a host rebuilt on an empty disk, a codebase moved to another host), it
is fetched back from origin: into the shared repository under `refs/isolator/incoming/<id>` first (what
git fetches lands in a repository's own store), then packed into the archive store as archive_store.py
keeps every archive, and the incoming ref deleted.
"""

from __future__ import annotations

import logging
from pathlib import Path

from activities.git.credentials import credential_variables
from activities.git.host_locks import host_locks
from activities.git.runner import config_variables, run_git
from activities.providers.worktree.archive import Archive, archive_ref, save_archive
from activities.providers.worktree.archive_store import ARCHIVE_PREFIX, archive_store, pack_own_objects
from isolator.contracts.environment import EnvironmentRef
from isolator.settings import Settings

INCOMING_PREFIX = "refs/isolator/incoming/"

log = logging.getLogger(__name__)


async def origin_url(repository: Path) -> str | None:
    result = await run_git("remote", "get-url", "--push", "origin", cwd=repository, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def push_token(settings: Settings) -> str | None:
    """The token the results' pushes use (GITHUB_TOKEN), for https origins."""
    return settings.github_token.get_secret_value() if settings.github_token else None


def _credentials(url: str, token: str | None) -> dict[str, str]:
    pairs, variables = credential_variables(url, token)
    return {**config_variables(pairs), **variables} if pairs else {}


async def push_archive(repository: Path, ref: str, token: str | None) -> str | None:
    """Push the archive `ref` of the store to origin under the same name; None when it went, else why not.
    The caller holds the repository's host lock."""
    url = await origin_url(repository)
    if url is None:
        return "the checkout has no `origin`"
    store = await archive_store(repository)
    result = await run_git("--git-dir", str(store.path), "push", "--quiet", "--no-verify", url, f"+{ref}:{ref}",
                           check=False, env=_credentials(url, token))
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["git push failed"])[-1][:300]
        log.warning("archive %s of %s not pushed to origin: %s", ref, repository, reason)
        return reason
    return None


async def delete_pushed_archive(repository: Path, ref: str, token: str | None) -> None:
    """The retention pruned it here: origin's copy goes too (a failure is only logged)."""
    url = await origin_url(repository)
    if url is None:
        return
    result = await run_git("push", "--quiet", "--no-verify", url, f":{ref}", cwd=repository, check=False,
                           env=_credentials(url, token))
    if result.returncode != 0:
        log.warning("pushed archive %s of %s not deleted at origin: %s", ref, repository, result.stderr.strip())


async def fetch_pushed_archive(repository: Path, ref: str, token: str | None) -> Archive | None:
    """Origin's copy of the archive `ref` into the archive store (the branch commit it names into the
    shared one); None when origin has none. The caller holds the repository's host lock."""
    url = await origin_url(repository)
    if url is None or not ref.startswith(ARCHIVE_PREFIX):
        return None
    incoming = INCOMING_PREFIX + ref.removeprefix(ARCHIVE_PREFIX)
    fetched = await run_git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", url, f"+{ref}:{incoming}",
                            cwd=repository, check=False, env=_credentials(url, token))
    if fetched.returncode != 0:
        return None
    parents = await run_git("rev-list", "--parents", "-n", "1", incoming, cwd=repository)
    commit, *rest = parents.stdout.split()
    head = rest[0] if len(rest) > 1 else None  # one parent (the index's): its branch had no commit
    store = await archive_store(repository)
    await pack_own_objects(store, [(commit, head)])
    await store.git("update-ref", ref, commit)
    await store.keep_branch_commit(ref, head)
    await run_git("update-ref", "-d", incoming, cwd=repository)
    return Archive(ref, commit, head)


async def save_and_push(path: Path, environment_id: str, branch: str, token: str | None) -> tuple[Archive, str | None]:
    """The worktree at `path` archived under its environment's name and pushed; (archive, why it was not
    pushed). The caller holds the worktree's and the repository's host locks."""
    ref = archive_ref(environment_id)
    archive = await save_archive(path, ref, branch)
    return archive, await push_archive(path, ref, token)


async def checkpoint(settings: Settings, environment: EnvironmentRef) -> None:
    """After an agent run, with ARCHIVE_PUSH: what the worktree holds now, uncommitted files included, is at
    origin, so a host that dies before the next archive loses none of it. A failure is logged, never raised:
    the run is over and answered."""
    worktree, repository = Path(environment.working_path), Path(environment.codebase.canonical_path)
    if not settings.archive_push or not worktree.is_dir():
        return
    try:
        async with host_locks(settings.worktree_base, worktree, repository):
            await save_and_push(worktree, environment.environment_id, environment.branch, push_token(settings))
    except Exception as error:  # noqa: BLE001 - the next run's checkpoint tries again
        log.warning("checkpoint of %s not saved to origin: %s", worktree, error)
