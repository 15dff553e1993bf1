"""How a run of the agent ended, in the user's words: the closing summary line ("— Done in 4.1 s.
1 file changed (`a.py`). $0.12 · 18k tokens"), and for an agent that failed, what went wrong in the
agent's own words and what helps."""

from __future__ import annotations

import time
from dataclasses import dataclass

from activities.git.staging import left_out_note
from activities.git.working_trees import Changes
from activities.runs.agents.base import AgentError, Usage
from activities.sandbox.user_programs import Finished
from isolator.contracts.agent import RunStatus

ADVICE = {
    "auth": "The model API refused the agent's credentials: {detail}. Check {credentials}.",
    "rate_limit": "The agent's usage limit or rate limit is reached{resets}: {detail}. Send the message again "
                  "once it renews.",
    "overloaded": "The model API is overloaded: {detail}. Try again in a few minutes.",
    "api": "The model API failed or could not be reached: {detail}. Try again; if it persists, check the "
           "API's address ({address}) and the network.",
    "refused": "The agent was stopped: it kept asking for {detail}, which the sandbox refuses. An operator can "
               "allow it with SANDBOX_ALLOWED_HOSTS (docs/sandbox.md).",
    "turn_limit": "The agent reached its turn limit: {detail}. Send a follow-up to let it go on, or raise its "
                  "limit in AGENT_ARGS.",
    "budget": "Stopped by the budget: {detail}.",
    "session": "The agent no longer knew this conversation's session: {detail}.",
    "other": "The agent failed: {detail}.",
}


WAITING_HEADLINES = {
    "tool": "Paused after {took}: a call needs a person's approval (below).",
    "question": "Paused after {took}: the agent asks you a question (below).",
    "plan": "Paused after {took}: the agent's plan waits for approval (below).",
    "budget": "Paused after {took} at its budget: continue or stop (below).",
}


# Where each driver's credentials and model API address come from: the hint names the driver's own.
CREDENTIALS = {
    "claude": "ANTHROPIC_API_KEY, or log Claude Code in once with HOME set to the agent home",
    "codex": "OPENAI_API_KEY, or the `env_key` of its provider in `$CODEX_HOME/config.toml`",
    "aider": "the key of its model's provider (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...)",
}
ADDRESSES = {"claude": "ANTHROPIC_BASE_URL", "codex": "OPENAI_BASE_URL, or its provider's `base_url`",
             "aider": "OPENAI_API_BASE, or its model's"}


def problem_text(error: AgentError, driver: str = "") -> str:
    resets = f" (it resets {error.resets})" if error.resets else ""
    return ADVICE[error.kind].format(detail=error.detail.rstrip("."), resets=resets,
                                     credentials=CREDENTIALS.get(driver, "the agent's API key"),
                                     address=ADDRESSES.get(driver, "the agent's own setting"))


def usage_text(usage: Usage) -> str:
    """"$0.12 · 18k tokens"; empty when the agent reported nothing."""
    parts = []
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:.2f}")
    if usage.total_tokens:
        tokens = usage.total_tokens
        parts.append(f"{tokens / 1000:.0f}k tokens" if tokens >= 10_000 else
                     f"{tokens / 1000:.1f}k tokens" if tokens >= 1000 else f"{tokens} tokens")
    return " · ".join(parts)


@dataclass
class Ending:
    """How a run ended, and the closing line that says so."""

    started: float
    status: RunStatus = "interrupted"
    driver: str = ""  # its hints name this driver's own settings
    exit_code: int | None = None
    problem: str | None = None  # it could not start
    error: AgentError | None = None  # the agent said what went wrong
    restarted: bool = False  # its worker shut down under it
    asking: str | None = None  # "waiting": what it asks a person (an ApprovalKind)
    limit: str | None = None  # "failed": the limit of a run's it reached and was stopped at

    def finished(self, finished: Finished) -> None:
        self.exit_code, self.limit = finished.exit_code, finished.limit
        self.status = "timed_out" if finished.timed_out else "done" if finished.exit_code == 0 else "failed"

    def failed(self, error: AgentError) -> None:
        """The agent reported an error, whatever its exit code."""
        self.error = error
        if self.status == "done":
            self.status = "failed"

    def stopped_at_cost(self, error: AgentError) -> None:
        """Past an automation's own cost cap: stopped there, as nobody is there to ask to go on."""
        self.status, self.error = "failed", error

    def cannot_start(self, problem: str) -> None:
        self.status, self.problem = "failed", problem

    def stopped(self) -> None:
        self.status = "stopped"

    def waits_for_answer(self, kind: str) -> None:
        """It asked a person (docs/approvals.md): the turn ended without the call, and the next run goes on.
        The agent's exit code is its interrupt's, no failure: none is kept."""
        self.status, self.asking, self.error, self.exit_code = "waiting", kind, None, None

    def service_restarted(self) -> None:
        """Its worker shut down (the service stopping or restarting), not a `/stop`."""
        self.status, self.restarted = "interrupted", True

    def summary(self, changes: Changes | None, log_tail: list[str], usage: Usage | None = None) -> str:
        took = _duration(time.monotonic() - self.started)
        headline = {
            "done": f"Done in {took}.",
            "failed": f"Failed with exit code {self.exit_code} after {took}." if self.exit_code
                      else f"Failed after {took}.",
            "timed_out": f"Timed out after {took} (the limit is AGENT_TIMEOUT_MINUTES) and was stopped.",
            "stopped": f"Stopped after {took}.",
            "interrupted": f"Interrupted after {took}.",
            "waiting": WAITING_HEADLINES.get(self.asking or "", "").format(took=took),
        }[self.status]
        if self.problem is not None:
            headline = f"The agent could not start: {self.problem}."
        if self.limit is not None and self.status == "failed":
            headline = f"Stopped after {took}: {self.limit}."
        if self.restarted:
            headline = (f"The service restarted while the agent worked ({took} in): send your message again "
                        "to go on; it is not started again by itself.")
        spent = usage_text(usage) if usage is not None else ""
        lines = [" ".join(part for part in (f"— {headline}", changes_text(changes), spent) if part)]
        if self.error is not None:
            lines.append(problem_text(self.error, self.driver))
        shown = [line for line in log_tail if line.strip()] if self.status in ("failed", "timed_out") else []
        if shown and self.problem is None and self.error is None:
            lines.append("Its last lines of standard error:\n```\n" + "\n".join(shown) + "\n```")
        return "\n".join(lines)


def changes_text(changes: Changes | None) -> str:
    if changes is None:
        return ""
    return " ".join(part for part in (_changed_text(changes), left_out_note(changes.left_out)) if part)


def _changed_text(changes: Changes) -> str:
    if not changes.files and not changes.commits:
        return "Nothing changed in the worktree."
    files = len(changes.files)
    names = ", ".join(f"`{name}`" for name in changes.files[:5]) + (f" and {files - 5} more" if files > 5 else "")
    parts = [f"{files} file{'s' if files != 1 else ''} changed ({names})" if files else "no file changed"]
    if changes.commits:
        parts.append(f"{changes.commits} commit{'s' if changes.commits != 1 else ''} made")
    return "; ".join(parts) + "."


def _duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
