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


def loop_failed(what: str, reason: str) -> str:
    return f"The pull-request loop could not {what} ({reason}); nothing was started."
