"""The coding agent: which one a codebase runs, a run's request as the environment workflow queues
it, and what a run reports when it ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.approvals import AllowedCalls, ApprovalAsk

# How a run ended. "interrupted": its worker died; an agent is not idempotent, so it is not run again.
# "waiting": it asked a person (docs/approvals.md); the next run resumes its session with the answer.
RunStatus = Literal["done", "failed", "timed_out", "stopped", "interrupted", "waiting"]


@dataclass
class AgentPlan:
    """What runs a message: a program in the worktree, a team's own Temporal workflow, or nothing."""

    kind: Literal["none", "command", "workflow"]
    argv: list[str] = field(default_factory=list)
    # where the command comes from, named in the reply when it cannot start
    source: str = "AGENT_COMMAND"
    workflow: str | None = None
    task_queue: str | None = None
    timeout_minutes: float = 30
    # Which driver reads the program (activities/runs/agents/): "command" runs `argv` as it is; "claude",
    # "codex" and "aider" add their agent's headless options to `argv` (the program, then AGENT_ARGS).
    driver: str = "command"


@dataclass
class QueueRunInput:
    """Hand a message to the agent of its environment (asked by the message workflow)."""

    environment_id: str
    codebase_id: str
    platform: str
    conversation_id: str
    text: str
    key: str  # the message workflow's id: a redelivery queues nothing twice
    answered: bool = False  # the message got a reply already: with no agent, it is not the one to say so
    merge_base: bool = False  # `/update-branch`: the PR's base is merged into the branch before the run
    user: str | None = None  # the platform's id of the sender: who may answer what the run asks


@dataclass
class RunRequest:
    run_id: str
    key: str
    conversation: str  # conversation_key(platform, conversation id)
    text: str
    plan: AgentPlan
    merge_base: bool = False  # the PR's base is merged into the branch before the run (docs/pr-loop.md)
    user: str | None = None  # the platform's id of the sender: who may answer what the run asks
    # A run that goes on after a person's answer: the calls they allowed (asked no more in this run)
    allowed: AllowedCalls | None = None
    continues: str | None = None  # the approval it answers
    answers: str | None = None  # the asker's message while their question was pending: that approval
    trace: dict[str, str] | None = None  # the message's trace, continued by its run (isolator/tracing.py)


@dataclass
class WaitingRequest:
    """A request of the run ahead that waits for a person's answer (docs/approvals.md): it holds the queue."""

    code: str
    summary: str  # "the call Bash `git push`", "the run's budget ($2)"
    conversation: str  # platform:conversation_id where it was asked


@dataclass
class Queued:
    """What the environment workflow did with a message. "no_agent": none is configured, the
    message was only isolated; "gone": the environment is being removed."""

    outcome: Literal["queued", "no_agent", "gone"]
    run_id: str | None = None
    ahead: int = 0  # runs before this one (the running one included)
    # "no_agent" in a conversation not yet told so: the message workflow says it, once (no_agent_key)
    tell_no_agent: bool = False
    # "queued" in a worktree whose set-up failed, and this conversation not yet told: said once (setup_failed_key)
    tell_setup_failed: bool = False
    waiting_for: WaitingRequest | None = None  # "queued" behind a run that waits for a person's answer


def setup_failed_key(environment_id: str, platform: str, conversation_id: str) -> str:
    """The idempotency key of the one "the set-up failed, the agent works anyway" reply per worktree and conversation."""
    return f"setup-failed:{environment_id}:{platform}:{conversation_id}"


def no_agent_key(platform: str, conversation_id: str) -> str:
    """The idempotency key of the one "no agent answers here" reply of a conversation."""
    return f"no-agent:{platform}:{conversation_id}"


@dataclass
class AgentRunReport:
    run_id: str
    status: RunStatus
    exit_code: int | None = None
    seconds: float = 0.0
    waiting: ApprovalAsk | None = None  # "waiting": what it asked, recorded and sent


@dataclass
class InterruptedRun:
    """A run whose worker died: recorded as interrupted, and its conversation told."""

    run_id: str
    conversation: str
    branch: str
    reason: str


@dataclass
class StopRequest:
    environment_id: str
    conversation: str
    key: str


@dataclass
class StopReport:
    """What `/stop` ended: the conversation's running run (its message's start) and queued messages.
    A run that ended by itself before the stop reached it is `finished` (its message) as `finished_as`."""

    stopped: str | None = None
    dropped: int = 0
    finished: str | None = None
    finished_as: str | None = None  # the run's RunStatus: done, failed, timed_out


@dataclass
class DroppedRuns:
    run_ids: list[str]


@dataclass
class RunStart:
    """The worktree as a run of a team's agent workflow found it (activities/git/working_trees.py)."""

    head: str | None
    tree: str


@dataclass
class TeamRunEnd:
    """How a team's agent workflow ended, for the run's record and its last message."""

    status: RunStatus
    answer: str
    seconds: float
    start: RunStart | None = None
