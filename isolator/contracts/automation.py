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


def automation_from_json(data: dict) -> Automation:
    """An automation as stored (`dataclasses.asdict` of it) back into its dataclass."""
    schedule = data.get("schedule")
    return Automation(**{
        **data,
        "report": ReportPlace(**data["report"]),
        "schedule": Schedule(**schedule) if schedule else None,
        "triggers": tuple(EventTrigger(**trigger) for trigger in data.get("triggers", ())),
        "owners": tuple(data.get("owners", ())),
    })


@dataclass
class FiringInput:
    """One firing: by its schedule (`trigger` "schedule") or by an event (its kind, id and fields)."""

    name: str
    trigger: str = "schedule"
    event_id: str | None = None
    event: dict = field(default_factory=dict)  # the event's fields, for the prompt's `{{ event.* }}`
    origin: str | None = None  # the GitHub conversation (`owner/repo#n`) the event came from


@dataclass
class FiringPlan:
    """What a firing does, decided from the stored automation: run (with its prompt), or not, and why."""

    outcome: Literal["run", "refused", "skipped"]
    reason: str = ""
    prompt: str = ""
    conversation_id: str = ""  # the firing's own conversation (platform `automation`)
    repository_url: str | None = None
    report_platform: str = ""
    report_conversation: str = ""
    quiet: bool = False
    results: Delivery = "report"


@dataclass
class FiringEnd:
    """How a firing's run ended, for its report and its record."""

    state: Literal["done", "failed", "nothing", "refused"]
    summary: str = ""
    cost_usd: float = 0.0
    pull_request_url: str | None = None


@dataclass
class PrepareFiring:
    firing: FiringInput
    workflow_id: str


@dataclass
class RunWait:
    conversation_id: str  # the firing's conversation (platform `automation`)
    first_run_id: str
    seconds: float  # at most this long: the firing says it started when a run goes on past a minute


@dataclass
class RunState:
    finished: bool
    status: str = ""
    run_id: str = ""
    cost_usd: float = 0.0
    answer: str = ""
    changed: bool = False  # it changed files or made commits
    closing: str = ""  # its chat message as it ended, whose last line says how


@dataclass
class FinishFiring:
    workflow_id: str
    name: str
    plan: FiringPlan
    end: FiringEnd


@dataclass
class FiringNote:
    """A line to the firing's report place (its start, a refusal), sent once by its key."""

    plan: FiringPlan
    text: str
    key: str


@dataclass
class CommittedAutomations:
    """`[[automations]]` as committed on a codebase's default branch at origin (definitions as stored)."""

    definitions: list[dict] = field(default_factory=list)
    problem: str = ""  # the file's automations cannot be read: nothing is changed
    revision: str = ""


@dataclass
class ReconcileInput:
    codebase_id: str
    committed: CommittedAutomations


@dataclass
class Reconciled:
    made: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # `name: why` (taken by another codebase or the API)
