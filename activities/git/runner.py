"""Running git: always an argument list, never a shell, never a prompt."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Transports a clone URL may use; `ext::` would run arbitrary commands.
_ALLOWED_PROTOCOLS = "file:git:http:https:ssh"


def admin_dir(worktree: Path) -> Path | None:
    """The folder a linked worktree's `.git` file points at (`<common>/worktrees/<name>`, its HEAD,
    index and entry); None for anything else (a main checkout's `.git` folder, no checkout)."""
    try:
        content = (worktree / ".git").read_text(errors="replace").strip()
    except OSError:
        return None
    if not content.startswith("gitdir: "):
        return None
    admin = Path(content.removeprefix("gitdir: "))
    return admin if admin.is_absolute() else (worktree / admin).resolve()


class GitError(Exception):
    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} failed ({returncode}): {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr.strip()


@dataclass
class GitResult:
    returncode: int
    stdout: str
    stderr: str


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment, then `extra`, then the safety variables: `extra` can never override those."""
    env = dict(os.environ)
    safety = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": _ALLOWED_PROTOCOLS,
        "GIT_SSH_COMMAND": env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
        "LC_ALL": "C",
    }
    env.update(extra or {})
    env.update(safety)
    return env


async def run_git(
    *args: str,
    cwd: Path | str | None = None,
    check: bool = True,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> GitResult:
    """Run `git -C cwd args...`, with `input` on its standard input; raise GitError on failure when check is set.

    `env` adds variables (GIT_INDEX_FILE, say) on top of the process environment; the safety variables
    (GIT_TERMINAL_PROMPT, GIT_ALLOW_PROTOCOL, GIT_SSH_COMMAND, LC_ALL) are applied after it and always win.
    """
    argv = ["git"]
    if cwd is not None:
        argv += ["-C", str(cwd)]
    argv += list(args)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL if input is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_environment(env),
    )
    try:
        stdout, stderr = await process.communicate(None if input is None else input.encode())
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    result = GitResult(process.returncode or 0, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    if check and result.returncode != 0:
        raise GitError(list(args), result.returncode, result.stderr)
    return result


async def is_valid_branch_name(name: str) -> bool:
    """git's own rules for a branch name; without `--branch`, which would expand `@` and `@{-1}`."""
    if not name or name.startswith("-") or name in {"@", "HEAD"}:
        return False
    result = await run_git("check-ref-format", f"refs/heads/{name}", check=False)
    return result.returncode == 0


async def branch_exists(repository: Path, branch: str) -> bool:
    result = await run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repository, check=False)
    return result.returncode == 0


async def commits_of(repository: Path, *revisions: str, kind: str = "^{commit}") -> list[str | None]:
    """The commit each revision names, None where it names none: one git process for them all.
    `kind=""` takes the revisions as they are (each may name its own kind, `^{tree}`)."""
    if any("\n" in revision for revision in revisions):
        raise ValueError("a revision cannot contain a newline")
    lines = "".join(f"{revision}{kind}\n" for revision in revisions)
    # Each answer is the commit's id, or the question followed by "missing" (or "ambiguous").
    result = await run_git("cat-file", "--batch-check=%(objectname)", cwd=repository, input=lines)
    answers = result.stdout.splitlines()
    return [answer if _OBJECT_ID.fullmatch(answer) else None for answer in answers]


class GitRunner(Protocol):
    """`run_git`'s signature; tests pass a wrapper around it that counts the processes."""

    async def __call__(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> GitResult: ...
