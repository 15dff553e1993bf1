"""What the bot says about the coding agent's runs."""

from __future__ import annotations

from isolator.contracts.agent import StopReport, WaitingRequest
from isolator.contracts.setup import RunLine
from workflows.chat.texts import quoted_safely


def agent_running(branch: str) -> str:
    return (f"Agent running in `{branch}`: it was kept. `/stop` the run first, or use `/worktree remove --force` "
            "to stop it and remove the worktree.")


def queued(ahead: int, waiting_for: WaitingRequest | None = None, conversation: str = "") -> str:
    """Where a message waits: behind `ahead` runs, the first of which may wait for a person's answer
    (`conversation`, the message's, is not named when the request was asked there)."""
    if waiting_for is not None:
        where = "" if waiting_for.conversation == conversation else f", asked in {waiting_for.conversation}"
        after = "" if ahead <= 1 else f", after {ahead - 1} more"
        return (f"Queued: the run ahead waits for an answer to {waiting_for.summary} (code `{waiting_for.code}`"
                f"{where}). Answering it lets this message run{after}.")
    runs = "1 run comes" if ahead == 1 else f"{ahead} runs come"
    return f"Queued: the agent works on one message at a time in this worktree, and {runs} first."


def after_failed_setup(branch: str) -> str:
    return (f"The set-up of `{branch}` failed (`/status` says so; `/worktree setup` runs it again), and the agent "
            "works on your message anyway, in a worktree that may not be ready. (Said once here.)")


def no_agent() -> str:
    return ("No coding agent answers in this conversation: messages get their own worktree, and no answer. "
            "Start the service with one (`AGENT=claude`, `AGENT=codex`, or your own program in AGENT_COMMAND), "
            "or set the codebase's `agent_command`, to have it work on them. (Said once per conversation.)")


def worktree_going() -> str:
    return "This worktree is being removed, so the agent was not started. Send your message again to get a new one."


RUN_ENDINGS = {"done": "done", "failed": "failed", "timed_out": "timed out"}


def stopped(report: StopReport) -> str:
    parts = []
    if report.stopped is not None:
        parts.append(f"Stopped the agent's run on \"{quoted_safely(report.stopped)}\"")
    if report.dropped:
        parts.append(f"dropped {report.dropped} queued message{'s' if report.dropped != 1 else ''}")
    text = " and ".join(parts) + "." if report.stopped is not None else " and ".join(parts).capitalize() + "."
    if report.finished is not None:
        ending = RUN_ENDINGS.get(report.finished_as or "", report.finished_as)
        finished = (f"The agent's run on \"{quoted_safely(report.finished)}\" had already finished ({ending}) "
                    "when the stop reached it: nothing was stopped.")
        return f"{finished} {text}" if parts else finished
    if not parts:
        return "Nothing to stop: the agent is not working on a message from this conversation."
    return text


def runs_status(running: RunLine | None, queued_runs: list[RunLine]) -> str:
    """The `/status` lines of the agent: the running run and the queue (nothing when both are empty)."""
    lines = []
    if running is not None:
        lines.append(f"Agent: running for {running.seconds} s on \"{quoted_safely(running.message)}\" "
                     f"(from {running.conversation})")
    elif queued_runs:
        lines.append("Agent: starting")
    if queued_runs:
        lines.append(f"Queue: {len(queued_runs)} message{'s' if len(queued_runs) != 1 else ''}: "
                     + "; ".join(f"\"{quoted_safely(run.message, 40)}\"" for run in queued_runs[:5])
                     + (" …" if len(queued_runs) > 5 else ""))
    return "\n".join(lines)
