"""What `/worktree why` shows about one worktree, read on its codebase's host: its uncommitted
files, its commits found on no other branch and no remote, why git calls it merged, its archive refs, and its disk use
in real blocks, counted within a time budget so that no message waits on a huge tree."""

from __future__ import annotations

from pathlib import Path

from temporalio import activity

from activities.git.disk_usage import disk_usage
from activities.git.runner import run_git
from activities.providers.worktree.archive import branch_archives
from activities.providers.worktree.archive_store import made_archive_store
from activities.providers.worktree.merged import merge_proof, read_refs
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
            facts.merged_by = await merged_by(repository, request.branch, request.codebase.default_branch)
        # Read without the repository's lock, so never made here: the first removal or restore makes it.
        if (store := await made_archive_store(repository)) is not None:
            facts.archive_refs = await branch_archives(store, request.branch)
        return facts


async def merged_by(repository: Path, branch: str, default_branch: str) -> str | None:
    """Which check finds the branch's work in the default branch or its upstream: the survey's own proof."""
    refs = await read_refs(run_git, repository, default_branch)
    tip = refs.tips.get(f"refs/heads/{branch}")
    return None if tip is None else await merge_proof(run_git, repository, refs, branch, tip)
