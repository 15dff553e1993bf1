"""What the bot says. One place, so the wording stays consistent across platforms."""

from __future__ import annotations

from isolator.contracts.repository import ConfigProblem, WorktreeBase
from isolator.contracts.setup import EnvironmentDetails
from isolator.contracts.worktree import WorktreeReady
from workflows.chat import setup_texts

# Chat platforms keep a message's line breaks: a paragraph is one line.
HELP = """Commands:
`/clone <repository-url-or-path-or-name>`: register a repository (or choose a registered one by name) and use it in this conversation
`/status`: show this conversation's repository and worktree (its set-up and ports), the agent's running run and the messages queued behind it, and the repository's worktree count and disk
`/worktree create|list|remove|link|cleanup|orphans|setup|why|removed|restore`: manage worktrees (`/worktree` alone explains each)
`/stop`: stop the agent's run for this conversation, and drop its queued messages
`/reset`: start a new agent session: the agent forgets this conversation so far
`/pr <title>`: push this worktree's branch and open a pull request; later runs push to it (GitHub repositories)
`/fix-ci`: the agent fixes what CI says is broken on this worktree's pull request
`/update-branch`: the agent merges the pull request's base into its branch and resolves the conflicts
`/budget`: today's spending against the daily budget; `/budget +10` adds $10 to it for today (admins)
`/automation list|show|run|pause|resume <name>`: the automations: list them, show one with its last firings, fire one now, pause or resume it (admins)
`/help`: show this help

Any other message gets its own isolated git worktree, created on first use and reused after; when a coding agent is configured, it works on the message there and its answer appears here as it is written.

A GitHub issue's or PR's worktree goes when it is closed, a Discord thread's when it is archived or deleted. Slack and Telegram send no close event: there a worktree goes with `/worktree remove`, or by the cleanup once the conversation has been quiet for the stale threshold (14 days unless configured; Telegram chats never go stale). Every removal is archived first: `/worktree restore <name>` brings a worktree back with its uncommitted changes."""


def working_in(branch: str) -> str:
    return f"Working in isolated branch `{branch}`"


def created(worktree: WorktreeReady) -> str:
    """A new worktree: where its branch started, and what of the repository's set-up cannot be used."""
    return (working_in(worktree.branch) + started_from(worktree.base) + config_note(worktree.config_problem)
            + unpushed_note(worktree))


def started_from(base: WorktreeBase | None) -> str:
    if base is None:  # an existing branch, or a PR's: it is what it is
        return ""
    if base.fallback_reason:
        return f", from the local `{base.branch}` at `{base.commit[:7]}` ({base.fallback_reason}, so nothing was fetched)"
    return f", from `{base.branch}` at `{base.commit[:7]}`"


def config_note(problem: ConfigProblem | None) -> str:
    return f"\n{problem.describe()}. The worktree was made without its set-up." if problem else ""


def unpushed_note(worktree: WorktreeReady) -> str:
    return f"\n{worktree.setup.unpushed}" if worktree.setup is not None and worktree.setup.unpushed else ""


def setup_skipped_for_fork(branch: str) -> str:
    return (f"The set-up of `{branch}` was skipped: the PR comes from a fork, and the repository's "
            "`.isolator.toml` runs set-up for forks only with `trust_forks = true`.")


def worktree_gone(path: str, branch: str) -> str:
    return (
        f"The worktree at `{path}` no longer exists (it was removed outside isolator). "
        f"Its environment is marked destroyed; a new worktree will be made from branch `{branch}`."
    )


def woken(branch: str, path: str) -> str:
    return (f"Restored `{branch}` at `{path}`, with its uncommitted changes: it had been hibernated to keep "
            "the codebase within its disk budget.")


def no_codebase(choices: list[str]) -> str:
    """Nothing of the message was kept (a command's too): the user must send it again once there is one."""
    if choices:
        names = ", ".join(f"`{name}`" for name in choices)
        return (
            f"Several repositories are registered ({names}) and this conversation uses none yet, so your message "
            "was not handed on. Choose one by its name, for example `/clone " + choices[0] + "`, then send your "
            "message again."
        )
    return ("No repository is registered yet, so your message was not handed on. Register one with "
            "`/clone <repository-url-or-path>`, then send your message again.")


def unknown_command(name: str) -> str:
    return f"Unknown command `/{quoted_safely(name, 40)}`.\n\n" + HELP


STOP_USAGE = "Usage: `/stop` (no arguments): stops the agent's run for this conversation and drops its queued messages."


CLONE_USAGE = ("Usage: `/clone <repository-url-or-path-or-name>`, for example `/clone https://github.com/owner/repo`, "
               "or `/clone project` for a repository registered as `project`.")


def no_codebase_named(name: str, choices: list[str]) -> str:
    registered = (" Registered: " + ", ".join(f"`{choice}`" for choice in choices) + ".") if choices else ""
    return (f"No repository is registered as `{quoted_safely(name)}`.{registered} "
            "`/clone <repository-url-or-path>` registers a new one.")


def clone_failed(target: str, reason: str) -> str:
    return f"Could not register `{quoted_safely(target, limit=200)}`: {reason}\n{CLONE_USAGE}"


def codebase_linked(name: str, path: str, created: bool) -> str:
    if created:
        return f"Registered repository `{name}` at `{path}`. This conversation now works in it."
    return f"Repository `{name}` is already registered (at `{path}`). This conversation now works in it."


def failed(reason: str) -> str:
    return f"Could not set up a worktree: {reason}"


def status(codebase: str | None, cwd: str | None, worktree: str | None, branch: str | None,
           details: EnvironmentDetails | None = None, hibernated: bool = False) -> str:
    if worktree:
        where = f"Worktree: `{worktree}` (branch `{branch}`)"
    else:  # not "none yet": it may have been removed a moment ago
        where = "Worktree: none" + (" (your next message makes one)" if codebase else "")
    if hibernated:
        where += ", hibernated to keep within the disk budget: the next message brings it back"
    lines = [f"Codebase: {codebase or 'none (use `/clone`)'}", where]
    if cwd and cwd != worktree:  # the same path said twice would only make the reader compare them
        lines.insert(1, f"Current working directory: {cwd}")
    if details is not None and details.setup_state in SETUP_STATES:
        lines += setup_texts.status_lines(SETUP_STATES[details.setup_state], details.setup_note)
    if details is not None and details.ports is not None:
        lines.append(f"Ports: {details.ports.first}-{details.ports.last} (ISOLATOR_PORT={details.ports.first})")
    if details is not None and details.removal_refused:  # the service's own removal, tried again every hour
        lines.append(f"Removal: tried again every hour, refused so far: {details.removal_refused} "
                     "A message here cancels it.")
    return "\n".join(lines)


def host_alive(host: str) -> str:
    """`/status`'s line on the codebase's host when it answers (a silent one's is host_texts.status_line)."""
    return f"Host: {host}, alive"


SETUP_STATES = {
    "running": "running",
    "ready": "ready",
    "failed": "failed (`/worktree setup` runs it again)",
    "skipped": "skipped",
}


def reviewing_pr(head_sha: str, branch: str) -> str:
    return f"Reviewing PR at commit `{head_sha[:7]}` (branch: `{branch}`)"


def sharing_with_issue(issue: str) -> str:
    return f"Reusing worktree from issue #{issue}"


def adopted(path: str, branch: str) -> str:
    return f"Using the existing worktree at `{path}` (branch `{branch}`)"


def quoted_safely(text: str, limit: int = 60) -> str:
    """User text as a reply may quote it: control and direction characters shown escaped (a terminal
    escape or a right-to-left override would act in the chat), backticks that would end the code span
    replaced, and a long text cut."""
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)
    shown = shown.replace("`", "'")
    return shown if len(shown) <= limit else shown[:limit] + "…"
