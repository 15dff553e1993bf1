"""An automation: the agent works on a schedule or on an event, with no one typing (docs/automations.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# Where a definition came from: a repository's committed `.isolator.toml`, or the operator's API.
Origin = Literal["repository", "api"]
# `pr`: the firing's work is pushed and a draft PR opened; `report`: the answer only, nothing pushed.
Delivery = Literal["pr", "report"]
# `fresh`: each firing is a conversation of its own in a fresh worktree; `keep`: one standing
# conversation whose worktree and agent session every firing resumes.
Memory = Literal["fresh", "keep"]
# What a firing does when the last one still runs (Temporal's schedule overlap policies).
Overlap = Literal["skip", "buffer_one", "allow_all"]


@dataclass(frozen=True)
class EventTrigger:
    """`on = ["github:issues.labeled:agent"]`: a platform, an event (with its action) and its argument:
    a label, a branch, a Slack channel; `webhook` is the generic `POST /webhooks/automations/<name>`."""

    platform: Literal["github", "slack", "webhook"]
    event: str  # `issues.labeled`, `check_suite.failed`, `message`, … (`call` for the generic webhook)
    argument: str = ""  # the label, the branch, `#channel`; empty: any

    def spelled(self) -> str:
        return ":".join(part for part in (self.platform, self.event, self.argument) if part)


@dataclass(frozen=True)
class Schedule:
    """`schedule = "0 7 * * 1"` (cron, in `timezone`) or `"@every 6h"` (an interval, in seconds)."""

    cron: str = ""
    every_seconds: int = 0
    timezone: str = "UTC"
    catchup_seconds: int = 3600  # a firing missed while the service was down still happens within this
    jitter_seconds: int = 0
    overlap: Overlap = "skip"

    def spelled(self) -> str:
        return self.cron or f"@every {self.every_seconds}s"


@dataclass(frozen=True)
class ReportPlace:
    """Where a firing reports: `slack:#eng-bots`, `telegram:<chat id>`, `discord:<channel id>`,
    `github:issue:<n>`, `github:origin` (the issue or PR the event came from), `test:<thread>`."""

    platform: str
    place: str

    def spelled(self) -> str:
        return f"{self.platform}:{self.place}"


@dataclass(frozen=True)
class Automation:
    name: str
    prompt: str
    report: ReportPlace
    origin: Origin
    codebase_id: str | None = None  # a repository's automation is its codebase's; the API names one
    schedule: Schedule | None = None
    triggers: tuple[EventTrigger, ...] = ()
    results: Delivery = "report"
    memory: Memory = "fresh"
    quiet: bool = False  # a firing that finds nothing to do says nothing
    max_cost_usd: float | None = None  # per firing
    daily_budget_usd: float | None = None  # per automation and UTC day
    owners: tuple[str, ...] = field(default_factory=tuple)  # `slack:U123`: may answer its approvals


@dataclass(frozen=True)
class AutomationProblem:
    """Why a definition cannot be used: which automation (or the file), which key, and why."""

    name: str | None
    key: str | None
    reason: str

    def describe(self) -> str:
        where = f"automation `{self.name}`" if self.name else "`[[automations]]`"
        return f"{where}{f', `{self.key}`' if self.key else ''}: {self.reason}"
