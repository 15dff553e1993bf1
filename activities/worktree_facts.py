"""What `/worktree why` shows about one worktree, read on its codebase's host: its uncommitted
files, its commits found on no other branch and no remote, why git calls it merged, its archive refs, and its disk use
in real blocks, counted within a time budget so that no message waits on a huge tree."""

from __future__ import annotations

from pathlib import Path

from temporalio import activity

from activities.disk_usage import disk_usage
from activities.git import run_git
from activities.providers.worktree.removal import ARCHIVE_PREFIX
from isolator.contracts.worktree import ExplainRequest, WorktreeFacts

SHOWN = 8  # lines of each list shown
DISK_BUDGET_SECONDS = 2.0


class WorktreeFactsActivities:
    @activity.defn
    async def explain_worktree(self, request: ExplainRequest) -> WorktreeFacts:
        path, repository = Path(request.working_path), Path(request.codebase.canonical_path)
        facts = WorktreeFacts(exists=(path / ".git").exists())
        if facts.exists:
            status = await run_git("status", "--short", "--untracked-files=all", cwd=path, check=False)
            lines = status.stdout.splitlines()
            facts.uncommitted, facts.uncommitted_count = lines[:SHOWN], len(lines)
            facts.disk_bytes, facts.disk_complete = disk_usage(path, DISK_BUDGET_SECONDS)
        branch = f"refs/heads/{request.branch}"
        if (await run_git("rev-parse", "--verify", "--quiet", branch, cwd=repository, check=False)).returncode == 0:
            # Commits found on no other branch and no remote: lost if the branch went.
            unpushed = await run_git("log", "--format=%h %s", branch, "--not", f"--exclude={request.branch}", "--branches",
                                     "--remotes", "--", cwd=repository, check=False)
            commits = unpushed.stdout.splitlines()
            facts.unpushed, facts.unpushed_count = commits[:SHOWN], len(commits)
            facts.merged_by = await merged_by(repository, branch, request.codebase.default_branch)
        archives = await run_git("for-each-ref", "--format=%(refname)", f"{ARCHIVE_PREFIX}{request.branch}-*",
                                 cwd=repository, check=False)
        facts.archive_refs = archives.stdout.splitlines()
        return facts


async def merged_by(repository: Path, branch: str, default_branch: str) -> str | None:
    """Which check finds the branch's work in the default branch (origin's when there is one)."""
    base = f"refs/remotes/origin/{default_branch}"
    if (await run_git("rev-parse", "--verify", "--quiet", base, cwd=repository, check=False)).returncode != 0:
        base = f"refs/heads/{default_branch}"
    shown = base.removeprefix("refs/remotes/").removeprefix("refs/heads/")
    if (await run_git("merge-base", "--is-ancestor", branch, base, cwd=repository, check=False)).returncode == 0:
        return f"its tip is an ancestor of `{shown}`"
    cherry = await run_git("cherry", base, branch, cwd=repository, check=False)
    marks = [line[:1] for line in cherry.stdout.splitlines()]
    if cherry.returncode == 0 and marks and all(mark == "-" for mark in marks):
        return f"every one of its {len(marks)} commits is already in `{shown}` (by patch id)"
    # A squash merge of several commits matches none of them one by one: merging the branch again
    # then changes nothing, the merge result is the base's own tree.
    base_tree = (await run_git("rev-parse", f"{base}^{{tree}}", cwd=repository)).stdout.strip()
    merge = await run_git("merge-tree", "--write-tree", base, branch, cwd=repository, check=False)
    if merge.returncode == 0 and merge.stdout.split("\n", 1)[0].strip() == base_tree:
        return f"its whole change is already in `{shown}` (squashed: merging it again changes nothing)"
    return None
