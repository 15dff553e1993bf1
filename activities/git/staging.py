"""`git add --all` that never steps into a nested repository, and is never stopped by one.

git's own `add --all` asks a nested repository (a gitlink with its `.git` in the worktree) whether it
is dirty by running `git status` inside it, with that repository's own configuration, which a run
wrote: its filter drivers would run outside the sandbox, as the worker. No configuration turns this
off for `add` (it overrides the submodule settings), so here the nested repositories are left out of
the `add` and recorded at their HEAD, which git reads without running anything.

A nested repository with no commit (an agent's `git init -q x`), or one whose HEAD git cannot read,
makes git's `add` fail as a whole ("does not have a commit checked out"): every later snapshot, commit
and archive of the worktree would fail with it. So such a repository is left out, and named, for the
caller to say so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from activities.git.runner import run_git


async def add_all(worktree: Path, env: dict[str, str] | None = None) -> list[str]:
    """Stage every change of `worktree` (into `env`'s GIT_INDEX_FILE, when it names one). Returns the
    nested repositories left out, having no commit to record."""
    tracked, untracked = await asyncio.gather(_tracked_nested(worktree, env), _untracked_nested(worktree, env))
    nested = [*tracked, *untracked]
    heads = await asyncio.gather(*(_head(worktree / path) for path in nested))
    await run_git("add", "--all", "--", ".", *(f":(exclude,literal){path}" for path in nested), cwd=worktree, env=env)
    for path, head in zip(nested, heads):
        if head is not None:
            await run_git("update-index", "--add", "--cacheinfo", f"160000,{head},{path}", cwd=worktree, env=env)
    return [path for path, head in zip(nested, heads) if head is None]


def left_out_note(paths: list[str] | tuple[str, ...], of: str = "the commit") -> str:
    """What a reply says of the nested repositories `add_all` left out; empty when there are none."""
    if not paths:
        return ""
    names = ", ".join(f"`{path}/`" for path in paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    if len(paths) == 1:
        return f"{names} is a git repository with no commit: left out of {of}."
    return f"{names} are git repositories with no commit: left out of {of}."


async def _head(repository: Path) -> str | None:
    head = await run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=repository, check=False)
    return head.stdout.strip() if head.returncode == 0 and head.stdout.strip() else None


async def _tracked_nested(worktree: Path, env: dict[str, str] | None) -> list[str]:
    """The gitlinks of the index whose folder holds a repository (git would look inside those)."""
    listing = await run_git("ls-files", "--stage", "-z", cwd=worktree, env=env)
    paths = []
    for entry in listing.stdout.split("\0"):
        mode, _, rest = entry.partition(" ")
        path = rest.partition("\t")[2]
        if mode == "160000" and (worktree / path / ".git").exists():
            paths.append(path)
    return paths


async def _untracked_nested(worktree: Path, env: dict[str, str] | None) -> list[str]:
    """The nested repositories `add` would record anew: git lists an untracked one as its folder,
    `x/`, where it lists every other untracked entry as a file (ignored ones left out, as `add` does)."""
    listing = await run_git("ls-files", "--others", "--exclude-standard", "-z", cwd=worktree, env=env)
    return [entry.removesuffix("/") for entry in listing.stdout.split("\0") if entry.endswith("/")]
