"""Moving a codebase to another host (POST /api/codebases/{id}/move): what the move workflow exchanges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase


def move_workflow_id(codebase_id: str) -> str:
    """One move of a codebase at a time: a second request while one goes joins it."""
    return f"move:{codebase_id}"


@dataclass
class MoveRequest:
    codebase_id: str
    host: str  # where it goes


@dataclass
class MovingEnvironment:
    id: str
    branch: str
    working_path: str
    status: Literal["active", "hibernated"]
    archive_ref: str  # its archive's name: the one it has, or the one a move saves it under


@dataclass
class MovePlan:
    """What moves: the codebase as it is, and its environments that have a worktree or an archive."""

    codebase: Codebase | None  # None: no such codebase (forgotten meanwhile)
    environments: list[MovingEnvironment] = field(default_factory=list)
    problem: str | None = None  # why it cannot move (already there), said to the asker


@dataclass
class ExportRequest:
    """On the old host: each environment's work archived and pushed to origin."""

    codebase: Codebase
    environments: list[MovingEnvironment]


@dataclass
class Exported:
    environment_id: str
    pushed: bool
    note: str = ""  # why not: no origin, a refused push, no folder


@dataclass
class ImportRequest:
    """On the new host: each environment put there from origin (codebase: as it is there, after its clone)."""

    codebase: Codebase
    environments: list[MovingEnvironment]


@dataclass
class Imported:
    environment_id: str
    outcome: Literal["already", "archive", "branch", "lost"]
    working_path: str  # its place on the new host
    note: str = ""


@dataclass
class ImportReport:
    worktree_base: str  # the new host's, where removed environments' archives are restored to
    environments: list[Imported] = field(default_factory=list)


@dataclass
class MoveFinish:
    old: Codebase
    new: Codebase  # host and checkout on the new host
    report: ImportReport
    old_host_answered: bool
    key: str  # the move workflow's id: its replies and signals are sent once


@dataclass
class MoveAbandoned:
    codebase_id: str
    reason: str  # kept as the codebase's checkout note


@dataclass
class MoveReport:
    outcome: Literal["moved", "refused"]
    message: str
    host: str | None = None
    worktrees: list[Imported] = field(default_factory=list)
    old_host_answered: bool = False  # its uncommitted work was pushed from it; else origin's archives were taken


@dataclass
class EnvironmentMoved:
    """To an environment's workflow: its worktree is on another host now (its codebase, its path)."""

    codebase: Codebase
    working_path: str
    key: str
