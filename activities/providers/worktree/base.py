"""A fresh base: new branches start from origin's default branch, fetched at most once per interval.

A burst of new conversations fetches once: the first takes the codebase's fetch lock and fetches,
the others wait for it and find the stamp fresh. A checkout without `origin`, or an origin that
cannot be reached, gives the local default branch, and says why; the failure is remembered for the
same interval, so a burst does not wait on an unreachable host fifty times.

`.isolator.toml` is read at that base too, for every step of a worktree's life (docs/ready-to-work.md
names each read): never at the worktree's own branch, where the agent commits.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from activities.git.host_locks import host_lock
from activities.git.runner import run_git
from isolator.contracts.repository import CONFIG_FILE, RepositorySetup
from isolator.repository_config import read_setup

FETCH_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Base:
    """What a new branch starts from: the revision to hand to git, and why it is the local one."""

    revision: str  # `refs/remotes/origin/<default>`, or `refs/heads/<default>`
    fallback_reason: str | None = None


async def fresh_base(worktree_base: Path, repository: Path, default_branch: str, interval_seconds: int) -> Base:
    stamp = worktree_base / ".fetched" / hashlib.sha256(str(repository.resolve()).encode()).hexdigest()[:32]
    async with host_lock(worktree_base, repository / ".git" / "isolator-fetch"):
        fallback = _recent(stamp, interval_seconds)
        if fallback is None:
            fallback = await _fetch(repository, default_branch)
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(json.dumps({"at": time.time(), "fallback": fallback}))
    if fallback:
        return Base(f"refs/heads/{default_branch}", fallback)
    return Base(f"refs/remotes/origin/{default_branch}")


def _recent(stamp: Path, interval_seconds: int) -> str | None:
    """The last fetch's fallback reason ("" when it worked) if it is younger than the interval."""
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    if time.time() - recorded.get("at", 0) >= interval_seconds:
        return None
    return recorded.get("fallback", "")


async def _fetch(repository: Path, default_branch: str) -> str:
    """"" when origin's default branch was fetched; otherwise why it was not."""
    origin = await run_git("remote", "get-url", "origin", cwd=repository, check=False)
    if origin.returncode != 0:
        return "the checkout has no `origin`"
    fetch = run_git("fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{default_branch}:refs/remotes/origin/{default_branch}",
                    cwd=repository, check=False)
    try:
        result = await asyncio.wait_for(fetch, FETCH_TIMEOUT_SECONDS)
    except asyncio.TimeoutError:
        return f"`origin` did not answer within {FETCH_TIMEOUT_SECONDS} s"
    if result.returncode != 0:
        first_line = (result.stderr.strip().splitlines() or ["git fetch failed"])[0]
        return f"`origin` could not be reached ({first_line[:200]})"
    return ""


async def unpushed_config(repository: Path, base: Base, default_branch: str) -> str | None:
    """A note when the local default branch commits a `.isolator.toml` that origin's (the one read) lacks."""
    if not base.revision.startswith("refs/remotes/"):
        return None
    local = await committed_config(repository, Base(f"refs/heads/{default_branch}"))
    if local is None or local == await committed_config(repository, base):
        return None
    return (f"`{CONFIG_FILE}` is committed on the local `{default_branch}` but not on origin's, so it is not used: "
            f"push it to origin's `{default_branch}`.")


async def default_branch_setup(repository: Path, base: Base, default_branch: str) -> RepositorySetup:
    """The set-up every step of a worktree's life follows (create, restore, wake, `/worktree setup`, its
    teardown, include, ports): `.isolator.toml` of the default branch as committed at `base`, never the
    worktree's branch nor its files, which the agent writes: they decide nothing the service does outside
    the sandbox."""
    setup = read_setup(await committed_config(repository, base))
    setup.unpushed = await unpushed_config(repository, base, default_branch)
    return setup


async def committed_config(repository: Path, base: Base) -> str | None:
    """`.isolator.toml` as committed at the base (origin's default branch when it was fetched), never
    a worktree's own copy: what a PR changes in it does not run."""
    shown = await run_git("show", f"{base.revision}:{CONFIG_FILE}", cwd=repository, check=False)
    return shown.stdout if shown.returncode == 0 else None


_CONFIGS_AT_COMMITS: OrderedDict[tuple[str, str], str | None] = OrderedDict()
_CONFIGS_KEPT = 256


async def config_at_commit(repository: Path, commit: str) -> str | None:
    """`.isolator.toml` at a commit (its full id): what a commit holds never changes, so it is read from
    git once per process (a warm claim and the refill after it read the same one)."""
    key = (str(repository), commit)
    if key not in _CONFIGS_AT_COMMITS:
        _CONFIGS_AT_COMMITS[key] = await committed_config(repository, Base(commit))
        if len(_CONFIGS_AT_COMMITS) > _CONFIGS_KEPT:
            _CONFIGS_AT_COMMITS.popitem(last=False)
    _CONFIGS_AT_COMMITS.move_to_end(key)
    return _CONFIGS_AT_COMMITS[key]
