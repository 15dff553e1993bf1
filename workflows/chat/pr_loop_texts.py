"""What the pull-request loop says in the PR's conversation and on the PR (docs/pr-loop.md)."""

from __future__ import annotations


def short(sha: str) -> str:
    return sha[:7]


def fixing(sha: str, checks: list[str], attempt: int, max_attempts: int) -> str:
    named = ", ".join(f"`{name}`" for name in checks[:5]) + (f" and {len(checks) - 5} more" if len(checks) > 5 else "")
    return (f"CI failed on `{short(sha)}`" + (f" ({named})" if named else "") +
            f": the agent works on a fix, attempt {attempt} of {max_attempts}.")


def fixing_stopped(sha: str, max_attempts: int) -> str:
    return (f"CI failed on `{short(sha)}` again: fixing stopped after {max_attempts} attempt"
            f"{'s' if max_attempts != 1 else ''} whose heads stayed red (AUTOFIX_MAX_ATTEMPTS). A push of "
            "yours starts the count again, and `/fix-ci` asks for one more try.")


def someone_elses_head(sha: str) -> str:
    return (f"CI failed on `{short(sha)}`, a commit the agent did not push: nothing was started. "
            "`/fix-ci` asks the agent to fix it.")


def passed(sha: str, fixes: int) -> str:
    return f"CI passed on `{short(sha)}` after {fixes} fix{'es' if fixes != 1 else ''}."


def reviewed(author: str, state: str, comments: int) -> str:
    asked = "asked for changes" if state == "changes_requested" else "commented"
    return (f"@{author} {asked} in a review" + (f" ({comments} inline comment{'s' if comments != 1 else ''})"
                                                  if comments else "") + ": the agent works on it.")


def marked_ready(number: int) -> str:
    return f"Every check passes: PR #{number} is marked ready for review (RESULTS_READY_WHEN_GREEN)."


def not_red(sha: str, state: str) -> str:
    return (f"CI has not failed on `{short(sha)}`, the PR's head: " +
            ("its checks are still running." if state == "pending" else "its checks pass.") + " Nothing to fix.")


def updating() -> str:
    return "The pull request's base goes into its branch: the agent merges it and resolves what conflicts."


UPDATE_BRANCH_MESSAGE = (
    "Bring this branch up to date with its base: before this run the service merged the base into it (never a "
    "rebase, never a force push). Resolve any conflict markers, keeping both sides' intent, make sure the code "
    "still works, and commit the merge.")

FIX_CI_USAGE = "Usage: `/fix-ci` (no arguments): the agent fixes what CI says is broken on this worktree's PR."
UPDATE_BRANCH_USAGE = ("Usage: `/update-branch` (no arguments): the agent merges the PR's base into its branch "
                       "and resolves the conflicts.")


def asked(kind: str, decision_outcome: str, reason: str) -> str:
    if decision_outcome == "run":
        return ("The agent works on CI's failures." if kind == "fix_ci"
                else "The agent merges the base into the branch.")
    return reason
