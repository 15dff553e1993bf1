"""A repository's own set-up (`.isolator.toml`) and what a new worktree was made from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CONFIG_FILE = ".isolator.toml"
# none: not run (yet, or the environment predates set-up); skipped: a malformed file, or a fork not trusted
SetupState = Literal["none", "running", "ready", "failed", "skipped"]
INCLUDE_FILE = ".worktreeinclude"
# `[results] pull_request`: how a new pull request is opened, or none is
PullRequestMode = Literal["draft", "ready", "off"]


@dataclass
class ResultsConfig:
    """`.isolator.toml [results]`, read from the base branch like the rest of that file."""

    commit: bool = True  # commit what the agent left uncommitted
    push: bool = True  # push the environment's branch to origin
    pull_request: PullRequestMode = "draft"
    branch_prefix: str = ""  # for new issue branches on origin: `agent/` makes `agent/issue-42`
    autofix: bool = True  # red CI on the service's pushed head starts a fix run (the operator's AUTOFIX bounds it)


@dataclass
class RepositoryConfig:
    """`.isolator.toml` as read from the committed default branch at origin; the defaults when absent."""

    setup_commands: list[str] = field(default_factory=list)
    setup_timeout_minutes: int = 15
    # False: the set-up needs the branch or the conversation, so a warm worktree is set up after its claim
    setup_warm: bool = True
    # the files the set-up depends on: a warm worktree is set up again only when one changed (none: always)
    setup_inputs: list[str] = field(default_factory=list)
    teardown_commands: list[str] = field(default_factory=list)
    teardown_timeout_minutes: int = 5
    include: list[str] = field(default_factory=list)  # added to `.worktreeinclude`
    submodules: bool = True
    lfs: str = "fetch"  # "skip": GIT_LFS_SKIP_SMUDGE for huge LFS repositories
    ports: int = 10
    trust_forks: bool = False
    results: ResultsConfig = field(default_factory=ResultsConfig)
    # `[approvals]`: more calls to ask about or deny, beside AGENT_APPROVALS (docs/approvals.md)
    approvals_ask: list[str] = field(default_factory=list)
    approvals_deny: list[str] = field(default_factory=list)


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
class PortBlock:
    """Consecutive ports an environment (or a warm worktree) holds: `ISOLATOR_PORT` is the first,
    `ISOLATOR_PORTS` `first-last`."""

    first: int
    last: int


@dataclass
class RepositorySetup:
    """The set-up a repository asks for, as its environment workflow holds it."""

    config: RepositoryConfig = field(default_factory=RepositoryConfig)
    problem: ConfigProblem | None = None  # a malformed file: no set-up runs
    # the set-up already ran in the warm worktree this environment claimed: only its ports are taken
    already_run: bool = False
    found: bool = False  # the repository has a `.isolator.toml` where it is read from
    # a `.isolator.toml` committed on the local default branch that origin's lacks: not used, and said so
    unpushed: str | None = None
    # whether the new worktree has a `.gitmodules` (None: not looked at, as for a set-up run again)
    gitmodules: bool | None = None
    # the ports the warm worktree it claimed held when its set-up ran: the environment takes them over
    warm_ports: PortBlock | None = None

    def nothing_to_run(self) -> bool:
        """No command, and no submodule in the worktree it was read for: no step is taken for it."""
        return not self.config.setup_commands and (self.gitmodules is False or not self.config.submodules)


@dataclass
class WorktreeBase:
    """Where a new branch started: origin's default branch after a fetch, or the local one."""

    branch: str  # the default branch's name, as the user knows it: `main`
    commit: str
    # why the local default branch was used: no origin, or origin could not be reached
    fallback_reason: str | None = None
