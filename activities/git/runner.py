"""Running git: always an argument list, never a shell, never a prompt, and never a program that a
repository's configuration names.

A sandboxed run can write the configuration of a nested repository it makes in its worktree, or of a
submodule's git dir: were the service's own `git status` to step into one, git would run the command
its `core.fsmonitor` names, outside the sandbox, with the worker's secrets. So every git command of the
service gets SAFE_CONFIG first: no hooks, no fsmonitor, no pager, no askpass, no credential helper
but the caller's own, and no stepping into submodules (their recorded commits are still compared).
"""

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
# Given as `GIT_CONFIG_*` variables, which git hands on to the git commands it starts (a submodule's
# included); they win over every configuration file. A caller's own come after them.
SAFE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # forgets every helper configured before: a push names its own after it
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "dirty"),  # a submodule's commit is compared; its files are not read
    ("status.submoduleSummary", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
)


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


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment, then `extra`, then the safety variables: `extra` can never override
    those. `extra`'s `GIT_CONFIG_*` pairs are kept, after SAFE_CONFIG."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_CONFIG")}
    extra = dict(extra or {})
    pairs = [*SAFE_CONFIG, *_config_pairs(extra)]
    safety = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": _ALLOWED_PROTOCOLS,
        "GIT_SSH_COMMAND": env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
        "LC_ALL": "C",
        **config_variables(pairs),
    }
    env.update(extra)
    env.update(safety)
    return env


def config_variables(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """`git -c` as variables: nothing of it shows in the process's argument list."""
    variables = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        variables[f"GIT_CONFIG_KEY_{index}"] = key
        variables[f"GIT_CONFIG_VALUE_{index}"] = value
    return variables


def _config_pairs(variables: dict[str, str]) -> list[tuple[str, str]]:
    """The `GIT_CONFIG_*` pairs of `variables`, taken out of them."""
    count = int(variables.pop("GIT_CONFIG_COUNT", "0"))
    pairs = [(variables.pop(f"GIT_CONFIG_KEY_{index}"), variables.pop(f"GIT_CONFIG_VALUE_{index}"))
             for index in range(count)]
    variables.pop("GIT_CONFIG_PARAMETERS", None)
    return pairs


async def run_git(
    *args: str,
    cwd: Path | str | None = None,
    check: bool = True,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> GitResult:
    """Run `git -C cwd args...`, with `input` on its standard input; raise GitError on failure when check is set.

    `env` adds variables (GIT_INDEX_FILE, say) on top of the process environment; the safety variables
    (GIT_TERMINAL_PROMPT, GIT_ALLOW_PROTOCOL, GIT_SSH_COMMAND, LC_ALL, SAFE_CONFIG) always win.
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
        env=git_environment(env),
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
