"""The git side of results: the service's commit of what the agent left, and the push of the
environment's branch to origin with the service's credentials.

The credentials reach git through a credential helper given in `GIT_CONFIG_*` variables of the push
alone: never in a URL, an argument list or a log, and never in the agent's environment. The helper
answers only for the host origin's push URL names, and only over https (http on the loopback
interface, for tests). Neither the commit nor the push runs the repository's hooks; the push is
never forced and names its one branch explicitly.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from activities.git.credentials import CREDENTIAL_HELPER, credential_target
from activities.git.runner import config_variables, run_git
from activities.git.staging import add_all

# What the repository's configuration may not change for the push (the git runner's SAFE_CONFIG
# already keeps hooks, fsmonitor, signing and other credential helpers out of every command).
_SAFE_CONFIG = [
    ("http.sslVerify", "true"),
    ("remote.origin.mirror", "false"),  # one branch is pushed, never every ref
    ("push.followTags", "false"),
]


async def current_branch(worktree: Path) -> str | None:
    result = await run_git("symbolic-ref", "--quiet", "HEAD", cwd=worktree, check=False)
    return result.stdout.strip().removeprefix("refs/heads/") if result.returncode == 0 else None


async def has_uncommitted(worktree: Path, excludes: list[str]) -> bool:
    """Changes git would commit: tracked files changed, or untracked ones not ignored."""
    with _excludes_file(excludes) as variables:
        status = await run_git("status", "--porcelain", "-z", "--untracked-files=all", cwd=worktree, env=variables)
    return bool(status.stdout.strip("\0"))


async def unresolved_conflicts(worktree: Path) -> list[str]:
    """Files a merge left unfinished: unmerged in the index, or with conflict markers still in them (an
    agent that staged a file without resolving it). Their work must not be committed and pushed."""
    unmerged = await run_git("diff", "--name-only", "--diff-filter=U", "-z", cwd=worktree, check=False)
    if names := sorted({name for name in unmerged.stdout.split("\0") if name}):
        return names
    checked = await run_git("diff", "HEAD", "--check", cwd=worktree, check=False)
    return sorted({line.split(":", 1)[0] for line in checked.stdout.splitlines() if "leftover conflict marker" in line})


async def commit_everything(worktree: Path, message: str, author: tuple[str, str], committer: tuple[str, str],
                            excludes: list[str]) -> str | None:
    """Commit every change, untracked files included; what `.gitignore` (or `excludes`, the files
    `.worktreeinclude` copied in) leaves out stays out. Returns the new commit; None when nothing was
    left to commit (the only change a nested repository with no commit, which is left out)."""
    identity = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
                "GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    with _excludes_file(excludes) as variables:
        await add_all(worktree, env=variables)
        if (await run_git("diff", "--cached", "--quiet", cwd=worktree, env=variables, check=False)).returncode == 0:
            return None
        await run_git("commit", "--quiet", "--no-verify", "--file=-", cwd=worktree, input=message,
                      env={**variables, **identity})
    return (await run_git("rev-parse", "HEAD", cwd=worktree)).stdout.strip()


async def commits_not_on_origin(worktree: Path, branch: str, *also: str) -> int:
    """Commits of `branch` that no ref of origin (as last fetched or pushed) holds, nor any of `also`."""
    counted = await run_git("rev-list", "--count", f"refs/heads/{branch}", "--not", "--remotes=origin", *also, "--",
                            cwd=worktree, check=False)
    return int(counted.stdout.strip() or 0) if counted.returncode == 0 else 0


async def commits_beyond(worktree: Path, branch: str, base: str) -> int:
    """Commits of `branch` that `base` does not hold."""
    counted = await run_git("rev-list", "--count", f"refs/heads/{branch}", "--not", base, "--", cwd=worktree, check=False)
    return int(counted.stdout.strip() or 0) if counted.returncode == 0 else 0


async def push_url(worktree: Path) -> str | None:
    result = await run_git("remote", "get-url", "--push", "origin", cwd=worktree, check=False)
    return result.stdout.strip() if result.returncode == 0 else None


@dataclass
class Pushed:
    ok: bool
    up_to_date: bool = False
    reason: str = ""  # git's, when refused


async def push_branch(worktree: Path, branch: str, remote_branch: str, token: str | None) -> Pushed:
    """`git push origin refs/heads/<branch>:refs/heads/<remote_branch>`: never forced, no hooks."""
    pairs = list(_SAFE_CONFIG)
    variables: dict[str, str] = {}
    url = await push_url(worktree)
    target = credential_target(url) if url else None
    if token is not None and target is not None:
        pairs.append(("credential.helper", CREDENTIAL_HELPER))
        variables = {"ISOLATOR_PUSH_PROTOCOL": target[0], "ISOLATOR_PUSH_HOST": target[1],
                     "ISOLATOR_PUSH_CREDENTIAL": token}
    result = await run_git(
        "push", "--porcelain", "--no-verify", "origin", f"refs/heads/{branch}:refs/heads/{remote_branch}",
        cwd=worktree, check=False, env={**config_variables(pairs), **variables},
    )
    lines = [line for line in result.stdout.splitlines() if "\t" in line]
    if result.returncode == 0:
        return Pushed(True, up_to_date=bool(lines) and all(line.startswith("=") for line in lines))
    return Pushed(False, reason=_reason(lines, result.stderr))


def _reason(lines: list[str], stderr: str) -> str:
    """git's own words: the ref's line (`[rejected] (fetch first)`), then its error and hints."""
    said = [line.split("\t")[-1] for line in lines if line.startswith("!")]
    errors = [line.strip() for line in stderr.splitlines()
              if line.strip() and not line.startswith("To ") and line.strip() != "Done"]
    return "\n".join([*said, *errors[:8]]) or "git push failed"


class _excludes_file:
    """`core.excludesFile` naming `excludes` (gitignore patterns), for one git command."""

    def __init__(self, excludes: list[str]) -> None:
        self.excludes = excludes
        self.folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> dict[str, str]:
        pairs = list(_SAFE_CONFIG)
        if self.excludes:
            self.folder = tempfile.TemporaryDirectory(prefix="isolator-excludes-")
            path = Path(self.folder.name) / "exclude"
            path.write_text("".join(f"{pattern}\n" for pattern in self.excludes))
            pairs.append(("core.excludesFile", str(path)))
        return config_variables(pairs)

    def __exit__(self, *exc: object) -> None:
        if self.folder is not None:
            self.folder.cleanup()


def commit_message(message: str, conversation: str, run_id: str | None) -> str:
    """The first line of the user's message, trimmed, then a trailer naming the conversation and run."""
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    subject = re.sub(r"\s+", " ", first) or f"Work from {conversation}"
    if len(subject) > 72:
        subject = subject[:71].rstrip() + "…"
    trailer = f"Isolator-Conversation: {conversation}" + (f"\nIsolator-Run: {run_id}" if run_id else "")
    return f"{subject}\n\n{trailer}\n"
