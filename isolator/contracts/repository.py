"""A repository's own set-up (`.isolator.toml`) and what a new worktree was made from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CONFIG_FILE = ".isolator.toml"
# none: not run (yet, or the environment predates set-up); skipped: a malformed file, or a fork not trusted
SetupState = Literal["none", "running", "ready", "failed", "skipped"]
INCLUDE_FILE = ".worktreeinclude"


@dataclass
class RepositoryConfig:
    """`.isolator.toml` as read from the committed default branch at origin; the defaults when absent."""

    setup_commands: list[str] = field(default_factory=list)
    setup_timeout_minutes: int = 15
    teardown_commands: list[str] = field(default_factory=list)
    teardown_timeout_minutes: int = 5
    include: list[str] = field(default_factory=list)  # added to `.worktreeinclude`
    submodules: bool = True
    lfs: str = "fetch"  # "skip": GIT_LFS_SKIP_SMUDGE for huge LFS repositories
    ports: int = 10
    trust_forks: bool = False


@dataclass
class ConfigProblem:
    """Why `.isolator.toml` could not be used: named for the user, file, line and reason."""

    file: str
    line: int | None
    reason: str

    def describe(self) -> str:
        where = f"`{self.file}`" + (f", line {self.line}" if self.line else "")
        return f"{where}: {self.reason}"


@dataclass
class RepositorySetup:
    """The set-up a repository asks for, as its environment workflow holds it."""

    config: RepositoryConfig = field(default_factory=RepositoryConfig)
    problem: ConfigProblem | None = None  # a malformed file: no set-up runs
    found: bool = False  # the repository has a `.isolator.toml` where it is read from
    # a `.isolator.toml` committed on the local default branch that origin's lacks: not used, and said so
    unpushed: str | None = None


@dataclass
class WorktreeBase:
    """Where a new branch started: origin's default branch after a fetch, or the local one."""

    branch: str  # the default branch's name, as the user knows it: `main`
    commit: str
    # why the local default branch was used: no origin, or origin could not be reached
    fallback_reason: str | None = None
