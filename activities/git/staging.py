"""`git add --all` that never steps into a nested repository.

git's own `add --all` asks a nested repository (a gitlink with its `.git` in the worktree) whether it
is dirty by running `git status` inside it, with that repository's own configuration, which a run
wrote: its filter drivers would run outside the sandbox, as the worker. No configuration turns this
off for `add` (it overrides the submodule settings), so here the nested repositories are left out of
the `add` and recorded at their HEAD, which git reads without running anything.
"""

from __future__ import annotations

from pathlib import Path

from activities.git.runner import run_git


async def add_all(worktree: Path, env: dict[str, str] | None = None) -> None:
    """Stage every change of `worktree` (into `env`'s GIT_INDEX_FILE, when it names one)."""
    nested = await _nested_repositories(worktree, env)
    await run_git("add", "--all", "--", ".", *(f":(exclude,literal){path}" for path in nested), cwd=worktree, env=env)
    for path in nested:
        head = await run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=worktree / path, check=False)
        if head.returncode == 0:
            await run_git("update-index", "--cacheinfo", f"160000,{head.stdout.strip()},{path}", cwd=worktree, env=env)


async def _nested_repositories(worktree: Path, env: dict[str, str] | None) -> list[str]:
    """The gitlinks of the index whose folder holds a repository (git would look inside those)."""
    listing = await run_git("ls-files", "--stage", "-z", cwd=worktree, env=env)
    paths = []
    for entry in listing.stdout.split("\0"):
        mode, _, rest = entry.partition(" ")
        path = rest.partition("\t")[2]
        if mode == "160000" and (worktree / path / ".git").exists():
            paths.append(path)
    return paths
