"""Set-up and teardown: the repository's commands, run in an environment's worktree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef, PortBlock
from isolator.contracts.repository import RepositorySetup, SetupState


@dataclass
class ReadSetupInput:
    codebase: Codebase


@dataclass
class CommandsRequest:
    """Set-up (or teardown) commands to run in the environment's worktree, in order."""

    environment: EnvironmentRef
    setup: RepositorySetup
    ports: PortBlock | None
    # conversations (`platform:id`) told of progress and of the outcome
    tell: list[str] = field(default_factory=list)
    key: str = ""  # makes its messages idempotent
    teardown: bool = False


@dataclass
class CommandsReport:
    outcome: Literal["done", "failed", "skipped"]
    seconds: float = 0.0
    failed_command: str | None = None
    exit_code: int | None = None  # None: it was stopped at its time limit, or at `limit`
    tail: list[str] = field(default_factory=list)  # the failed command's last lines of output
    limit: str | None = None  # the limit of a run's it reached and was stopped at (activities/sandbox/limits.py)


@dataclass
class SetupStateInput:
    environment_id: str
    state: SetupState
    note: str | None = None  # what `/status` adds (setup_note.py)


@dataclass
class EnvironmentDetails:
    """What `/status` adds about an environment: its set-up, its ports, and the agent's runs."""

    setup_state: SetupState
    ports: PortBlock | None = None
    running: RunLine | None = None
    queued: list[RunLine] = field(default_factory=list)
    setup_note: str | None = None  # no `.isolator.toml`, a success's last lines, a file not pushed
    # what a run asked a person and waits for (docs/approvals.md): its summary and its code
    awaiting: list[str] = field(default_factory=list)
    # why the service's own removal of it was refused, while it is tried again every hour (its workflow's)
    removal_refused: str | None = None


@dataclass
class RunLine:
    """A run of the agent as `/status` shows it."""

    message: str
    conversation: str
    seconds: int  # since it started (running) or was queued
