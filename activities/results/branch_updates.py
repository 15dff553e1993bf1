"""Others' commits on a PR's branch, taken into its worktree before a run (docs/results.md).

Reviewers push to the PR's branch too. Were the worktree left behind, the agent would work on an old
tip and the service's push after the run would be refused. So, before a run, origin's branch is
fetched and merged in: a fast-forward when the worktree has no commits of its own, else a merge; on
request the PR's base branch is merged too (a PR that conflicts with it). Nothing is ever forced,
rebased, committed for the agent or stashed: git's own `merge` refuses, untouched, whatever would
overwrite uncommitted work, and that refusal is reported. A merge that conflicts is left in place
(markers, MERGE_HEAD) for the agent to resolve in the run; the note it gets names the files.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import asyncpg
from temporalio import activity

from activities.chat.platforms.github_app.credentials import git_token
from activities.git.host_locks import host_lock
from activities.git.runner import config_variables, run_git
from activities.providers.worktree.base import FETCH_TIMEOUT_SECONDS
from activities.results.commit_and_push import CREDENTIAL_HELPER, credential_target, current_branch
from activities.results.records import PullRequestRecords
from isolator.contracts.branch_updates import BranchUpdate, BranchUpdateRequest
from isolator.contracts.codebase import repository_full_name
from isolator.results_rules import kind_of, parse_identity
from isolator.settings import Settings


@dataclass
class _Merge:
    """One merge of an origin branch into the worktree's."""

    outcome: Literal["nothing", "fast_forward", "merged", "conflict", "refused"]
    commits: int = 0  # origin's commits that were new to the worktree
    reason: str = ""  # git's, when it refused
    conflicts: list[str] = field(default_factory=list)


class BranchUpdateActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool) -> None:
        self.settings = settings
        self.pool = pool
        self.records = PullRequestRecords(pool)

    @activity.defn
    async def take_in_branch_updates(self, request: BranchUpdateRequest) -> BranchUpdate:
        update = await self._take_in(request)
        if update.note and request.run_id is not None:
            # The run's record says what the agent was told, not only what the user wrote; once, for a retry.
            await self.pool.execute(
                "UPDATE agent_runs SET message = $2 || E'\\n\\n' || message WHERE id = $1 AND strpos(message, $2) = 0",
                request.run_id, update.note)
        return update

    async def _take_in(self, request: BranchUpdateRequest) -> BranchUpdate:
        environment = request.environment
        codebase = environment.codebase
        recorded = await self.records.of_branch(codebase.id, environment.branch)
        if recorded is None and kind_of(environment) != "pull_request":
            return BranchUpdate("no_pull_request")
        # A PR conversation's own branch is its PR's head even before the service recorded the PR.
        remote = recorded.remote_branch if recorded is not None else environment.branch
        base = recorded.base_branch if recorded is not None else codebase.default_branch
        worktree = Path(environment.working_path)
        url = await _origin_url(worktree) if worktree.is_dir() else None
        if url is None:
            return BranchUpdate("nothing")
        checked_out = await current_branch(worktree)
        if checked_out != environment.branch:
            where = f"on `{checked_out}`" if checked_out else "on no branch (a detached HEAD)"
            return BranchUpdate("refused", f"Before this run, nothing that others pushed to `{remote}` on origin "
                                           f"was merged: the worktree is {where}, not on its own branch "
                                           f"`{environment.branch}`.")
        merging = await _merge_in_progress(worktree)
        if merging is not None:
            if not await _is_ancestor(worktree, merging, "HEAD"):  # an earlier run's conflict, still unresolved
                merged = base if merging == await _tip(worktree, base) else remote
                what = f"the base branch `{base}`" if merged == base else f"what others pushed to `{remote}`"
                conflicts = await _conflicts(worktree)
                return BranchUpdate("conflict", _conflict_note(what, merged, conflicts), conflicts)
            # Concluded by a commit made elsewhere (in a run's own view of the repository, whose take-back
            # resets this worktree and so ends the merge, unless it stopped in between): nothing is left to merge.
            await run_git("merge", "--quit", cwd=worktree)
        unreachable = await self._fetch(worktree, Path(codebase.canonical_path), url,
                                        [remote, base] if request.merge_base else [remote])
        if unreachable:
            return BranchUpdate("failed", f"Before this run, `{remote}` could not be brought up to date with origin "
                                          f"({unreachable}): what others pushed to it, if anything, is not in "
                                          "the worktree.")
        identity = parse_identity(self.settings.results_committer)
        theirs = await _merge(worktree, f"refs/remotes/origin/{remote}", identity)
        if theirs.outcome == "conflict":
            note = _conflict_note(f"what others pushed to `{remote}`", remote, theirs.conflicts)
            return BranchUpdate("conflict", note, theirs.conflicts)
        if theirs.outcome == "refused":
            return BranchUpdate("refused", _refused_note(f"others pushed to `{remote}`", remote, theirs.reason))
        notes = [_taken_note(remote, theirs)] if theirs.commits else []
        outcome = theirs.outcome
        if request.merge_base:
            based = await _merge(worktree, f"refs/remotes/origin/{base}", identity)
            if based.outcome == "conflict":
                notes.append(_conflict_note(f"the base branch `{base}`", base, based.conflicts))
                return BranchUpdate("conflict", "\n\n".join(notes), based.conflicts)
            if based.outcome == "refused":
                notes.append(_refused_note(f"the base branch `{base}` moved on", base, based.reason))
                return BranchUpdate("refused", "\n\n".join(notes))
            if based.commits:
                notes.append(f"Before this run, the service merged the base branch `{base}` (origin) into "
                             f"`{environment.branch}`, so that the pull request can be merged; it merged cleanly.")
                outcome = "merged"
        return BranchUpdate(outcome, "\n\n".join(notes))

    async def _fetch(self, worktree: Path, repository: Path, url: str, branches: list[str]) -> str:
        """"" once origin's `branches` are fetched into `refs/remotes/origin/`; otherwise why not. With the
        service's credentials as a push has them: through a helper in `GIT_CONFIG_*`, never in a URL or argv."""
        pairs = [("http.sslVerify", "true")]
        variables: dict[str, str] = {}
        target = credential_target(url)
        token = await git_token(self.settings, repository_full_name(url)) if target is not None else None
        if token is not None and target is not None:
            pairs.append(("credential.helper", CREDENTIAL_HELPER))
            variables = {"ISOLATOR_PUSH_PROTOCOL": target[0], "ISOLATOR_PUSH_HOST": target[1],
                         "ISOLATOR_PUSH_CREDENTIAL": token}
        refspecs = [f"+refs/heads/{branch}:refs/remotes/origin/{branch}" for branch in dict.fromkeys(branches)]
        # The same lock as the base's fetch: one fetch at a time writes the repository's remote refs.
        async with host_lock(self.settings.worktree_base, repository / ".git" / "isolator-fetch"):
            fetch = run_git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin", *refspecs,
                            cwd=worktree, check=False, env={**config_variables(pairs), **variables})
            try:
                result = await asyncio.wait_for(fetch, FETCH_TIMEOUT_SECONDS)
            except asyncio.TimeoutError:
                return f"origin did not answer within {FETCH_TIMEOUT_SECONDS} s"
        if result.returncode != 0:
            return (result.stderr.strip().splitlines() or ["git fetch failed"])[0][:200]
        return ""


async def _merge(worktree: Path, theirs: str, identity: tuple[str, str]) -> _Merge:
    """`theirs` into the checked-out branch: a fast-forward when the branch has nothing of its own,
    else a merge commit (the service's); git refuses, changing nothing, what would overwrite local work."""
    new = await _count(worktree, theirs, "HEAD")
    if new == 0:
        return _Merge("nothing")
    own = await _count(worktree, "HEAD", theirs)
    mode = ["--ff-only"] if own == 0 else ["--no-ff", "--no-edit"]  # explicit: the repository's merge.ff is not asked
    names = {"GIT_AUTHOR_NAME": identity[0], "GIT_AUTHOR_EMAIL": identity[1],
             "GIT_COMMITTER_NAME": identity[0], "GIT_COMMITTER_EMAIL": identity[1]}
    result = await run_git("merge", "--quiet", "--no-autostash", "--no-verify", *mode, theirs, cwd=worktree,
                           check=False, env=names)
    if result.returncode == 0:
        return _Merge("fast_forward" if own == 0 else "merged", new)
    if await _merge_in_progress(worktree) is not None:
        return _Merge("conflict", new, conflicts=await _conflicts(worktree))
    said = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    return _Merge("refused", new, reason="\n".join(said[:12]) or "git merge failed")


async def _origin_url(worktree: Path) -> str | None:
    result = await run_git("remote", "get-url", "origin", cwd=worktree, check=False)
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


async def _count(worktree: Path, revision: str, excluded: str) -> int:
    counted = await run_git("rev-list", "--count", revision, "--not", excluded, "--", cwd=worktree)
    return int(counted.stdout.strip() or 0)


async def _tip(worktree: Path, branch: str) -> str | None:
    result = await run_git("rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{branch}", cwd=worktree,
                           check=False)
    return result.stdout.strip() or None


async def _merge_in_progress(worktree: Path) -> str | None:
    """The commit being merged (MERGE_HEAD), when a merge waits to be concluded."""
    result = await run_git("rev-parse", "--verify", "--quiet", "MERGE_HEAD", cwd=worktree, check=False)
    return result.stdout.strip() or None


async def _is_ancestor(worktree: Path, ancestor: str, descendant: str) -> bool:
    result = await run_git("merge-base", "--is-ancestor", ancestor, descendant, cwd=worktree, check=False)
    return result.returncode == 0


async def _conflicts(worktree: Path) -> list[str]:
    listed = await run_git("diff", "--name-only", "--diff-filter=U", "-z", cwd=worktree)
    return sorted({name for name in listed.stdout.split("\0") if name})


def _taken_note(remote: str, merge: _Merge) -> str:
    how = "a fast-forward" if merge.outcome == "fast_forward" else "merged with the worktree's own commits"
    commits = f"{merge.commits} commit{'s' if merge.commits != 1 else ''}"
    return f"Before this run, the service took in {commits} that others pushed to `{remote}` on origin ({how})."


def _conflict_note(what: str, branch: str, conflicts: list[str]) -> str:
    files = ", ".join(conflicts) if conflicts else "none left unmerged, but the merge is not committed"
    return (f"Before this run, the service merged {what} (origin) into the worktree, and these files conflict: "
            f"{files}. Resolve the conflict markers, keep both sides' intent, and commit the merge "
            f"(`origin/{branch}` is fetched).")


def _refused_note(what: str, branch: str, reason: str) -> str:
    return (f"Before this run, {what} (origin), but git would not merge it into the worktree, and nothing was "
            f"changed:\n```\n{reason}\n```\nMerge `origin/{branch}` (fetched) yourself, keeping the worktree's "
            f"uncommitted changes, so that the push after this run is not refused.")
