"""Warm worktrees on disk: made at the fresh base with a detached HEAD, set up, kept at the base, and
moved into place on a new branch when claimed (docs/warm.md). The database decides who claims which
(activities/warm/pool.py); everything here is idempotent, so a retry after a crash finishes the job.

They live in `WORKTREE_BASE/.warm/<codebase>/<id>`, apart from the environments' worktrees: never
adopted (no branch, not at an expected path), never listed as orphans (survey.py leaves `.warm` out).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path

from activities.git.host_locks import host_lock
from activities.git.ownership import mark_as_made_here
from activities.git.paths import ensure_inside
from activities.git.runner import commits_of, run_git
from activities.git.stale_locks import run_git_recovering
from activities.providers.worktree.include import copy_included
from activities.sandbox.command_lists import run_user_commands
from activities.sandbox.user_programs import SUBMODULES, user_environment
from isolator.contracts.repository import PortBlock, RepositoryConfig

WARM_FOLDER = ".warm"


def warm_root(worktree_base: Path, codebase_name: str) -> Path:
    return worktree_base / WARM_FOLDER / codebase_name


def is_warm(worktree_base: Path, path: Path) -> bool:
    """A pool's worktree, not an environment's: the survey does not count it as an orphan."""
    return path.is_relative_to(worktree_base.resolve() / WARM_FOLDER)


def setup_digest(config: RepositoryConfig) -> str:
    """What a warm set-up depends on besides the files: another digest means set it up again."""
    what = [config.setup_commands, config.setup_inputs, config.include, config.submodules, config.lfs,
            config.setup_warm]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:16]


def sets_up_warm(config: RepositoryConfig, path: Path) -> bool:
    """Its set-up runs before the claim: there is one, and `[setup] warm` is not false."""
    has_submodules = config.submodules and (path / ".gitmodules").is_file()
    return config.setup_warm and bool(config.setup_commands or has_submodules)


def _checkout_env(config: RepositoryConfig) -> dict[str, str]:
    return {"GIT_LFS_SKIP_SMUDGE": "1"} if config.lfs == "skip" else {}


class WarmDisk:
    def __init__(self, worktree_base: Path, repository: Path) -> None:
        self.base = worktree_base
        self.repository = repository

    async def make(self, path: Path, commit: str, config: RepositoryConfig) -> None:
        """A worktree at `commit` with a detached HEAD, and the checkout's included files."""
        ensure_inside(self.base, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        async with host_lock(self.base, self.repository):
            await run_git_recovering(self.repository, "worktree", "add", "--detach", "--", str(path), commit,
                                     cwd=self.repository, env=_checkout_env(config))
        mark_as_made_here(path)  # a create that finds it on its branch later resumes it, never adopts it
        await copy_included(self.repository, path, config.include)

    async def move_to(self, path: Path, commit: str, config: RepositoryConfig) -> None:
        """A warm worktree follows the base: its tracked files move to `commit`; what the set-up made stays."""
        await run_git("checkout", "-q", "--detach", commit, cwd=path, env=_checkout_env(config))
        await copy_included(self.repository, path, config.include)  # files added to the list meanwhile

    async def inputs_changed(self, old: str, new: str, inputs: list[str]) -> bool:
        """Did a file the set-up depends on change between the commits? With no inputs named: always."""
        if not inputs:
            return True
        result = await run_git("diff", "--quiet", "--no-ext-diff", "--no-textconv", old, new, "--", *inputs,
                               cwd=self.repository, check=False)
        return result.returncode != 0

    async def set_up(self, path: Path, config: RepositoryConfig, ports: PortBlock | None = None) -> str | None:
        """The repository's set-up, before any branch is known, told the ports the worktree holds (which
        the environment that claims it takes over); None when it worked, else why not."""
        commands = list(config.setup_commands)
        if config.submodules and (path / ".gitmodules").is_file():
            commands.insert(0, SUBMODULES)
        limit = 60.0 * config.setup_timeout_minutes
        told = {"ISOLATOR_WORKTREE": str(path), "ISOLATOR_WARM": "1"}
        if ports is not None:
            told |= {"ISOLATOR_PORT": str(ports.first), "ISOLATOR_PORTS": f"{ports.first}-{ports.last}"}
        if not commands:
            return None
        finished = await run_user_commands(commands, path, user_environment(told), limit)
        if finished.failed is None:
            return None
        how = f"was stopped: {finished.limit}" if finished.limit else f"exited with code {finished.exit_code}" \
            if finished.exit_code is not None else "was stopped at the time limit"
        last = next((line for line in reversed(finished.tail) if line.strip()), "")
        return f"`{commands[finished.failed]}` {how}" + (f": {last[:200]}" if last else "")

    async def claim_into(self, warm: Path, target: Path, branch: str, commit: str, config: RepositoryConfig) -> None:
        """Move the warm worktree to `target` and put it on the new `branch` at `commit`. Each step looks
        at what is done first: a retry after a crash at any point finishes the same claim."""
        ensure_inside(self.base, target)
        if warm.is_dir() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(warm, target)  # atomic: the folder is in one place or the other
        async with host_lock(self.base, self.repository):
            # git's record of where the worktree is (also after a crash between the rename and this)
            await run_git("worktree", "repair", "--", str(target), cwd=self.repository)
            at, head = (await run_git("rev-parse", "HEAD", "--abbrev-ref", "HEAD", cwd=target)).stdout.split()
            if head == branch:
                return
            made = await run_git("branch", "--no-track", "--", branch, commit, cwd=self.repository, check=False)
            if made.returncode != 0 and await commits_of(self.repository, f"refs/heads/{branch}") != [commit]:
                at = ""  # the name is taken, at another commit: checked out below, as it always was
        if at == commit:
            # Its files are the new branch's already: only HEAD moves. A checkout would read all of the
            # worktree's files again (30-90 ms at 5,000 files), for nothing.
            await run_git("symbolic-ref", "HEAD", f"refs/heads/{branch}", cwd=target)
        else:
            await run_git("checkout", "-q", branch, cwd=target, env=_checkout_env(config))

    async def give_back(self, target: Path, warm: Path, branch: str) -> None:
        """Undo a claim that could not be finished: the worktree back in the pool, the new branch gone."""
        if target.is_dir() and not warm.exists():
            with contextlib.suppress(OSError):
                await run_git("checkout", "-q", "--detach", cwd=target, check=False)
                os.rename(target, warm)
        async with host_lock(self.base, self.repository):
            await run_git("worktree", "repair", "--", str(warm), cwd=self.repository, check=False)
            await run_git("branch", "-D", "--", branch, cwd=self.repository, check=False)

    async def remove(self, path: Path) -> None:
        """Gone from git's list and from the disk, whatever state a crash left it in (or the checkout:
        a deleted codebase's may be gone, and git's list with it)."""
        has_checkout = self.repository.is_dir()
        async with host_lock(self.base, self.repository):
            if has_checkout:
                await run_git("worktree", "remove", "--force", "--force", "--", str(path), cwd=self.repository,
                              check=False)
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(ensure_inside(self.base, path))
            if has_checkout:
                await run_git("worktree", "prune", cwd=self.repository, check=False)
