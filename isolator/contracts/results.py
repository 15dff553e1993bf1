"""Results: after a run ends `done`, the service (never the agent) commits what the agent left, pushes
the environment's own branch to origin with its credentials, and opens or updates the pull request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.agent import AgentPlan
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.repository import PullRequestMode

@dataclass
class PullRequestRef:
    """The pull request a branch's work goes to, as recorded."""

    repository: str  # owner/name
    number: int
    url: str
    remote_branch: str
    base_branch: str
    title: str = ""
    draft: bool = False
    origin: Literal["opened", "followed"] = "opened"
    state: str = "open"
    checks: str | None = None


@dataclass
class PushRequest:
    """Deliver one run's work (run_id set), or the work so far for `/pr` (`title` set)."""

    environment: EnvironmentRef
    conversation: str  # platform:conversation id
    run_id: str | None = None
    message: str = ""  # the user's message, for the commit's subject
    plan: AgentPlan | None = None  # who the agent is: the author of the commit
    title: str | None = None  # `/pr <title>`


# What the push step did. Only "pushed" and "up_to_date" go on to the pull request.
PushOutcome = Literal[
    "pushed", "up_to_date",
    "off",  # RESULTS=off, or nothing asked for this conversation (a chat without `/pr`): say nothing
    "nothing",  # no new work: say nothing
    "kept",  # not pushed on purpose (a fork, push = false, pull_request = "off", not GitHub, no credentials)
    "rejected",  # origin refused the push: git's reason is told, the work stays
    "refused",  # not a branch this environment may push (the default branch, one it does not own)
]


@dataclass
class PushReport:
    outcome: PushOutcome
    text: str = ""  # for the user, when there is something to say without a pull request
    repository: str | None = None  # owner/name on GitHub
    default_branch: str = ""
    remote_branch: str = ""
    commit: str | None = None  # the branch's tip as pushed
    new_commits: int = 0
    committed: bool = False  # the agent's uncommitted changes were committed by the service
    mode: PullRequestMode = "draft"
    existing: PullRequestRef | None = None  # the PR this branch's work goes to, when there is one
    follows_pr: int | None = None  # a same-repository PR's conversation: its number


@dataclass
class PublishRequest:
    request: PushRequest
    push: PushReport


@dataclass
class Delivery:
    """What the results of a run (or a `/pr`) came to, and the line the conversation got."""

    outcome: Literal["opened", "updated", "pushed", "kept", "rejected", "refused", "nothing", "off", "failed"]
    text: str = ""
    pull_request: PullRequestRef | None = None


@dataclass
class PullRequestStatusRequest:
    codebase: Codebase
    branch: str


@dataclass
class PullRequestStatus:
    """For `/status`: the branch's PR as GitHub says now (or as last recorded, when it cannot be asked);
    None when the branch has none."""

    pull_request: PullRequestRef | None = None
    checks: str | None = None  # "2 passed, 1 pending"
    fresh: bool = True
    details: list[str] = field(default_factory=list)
    ci_loop: str | None = None  # the pull-request loop's line: fix runs made of the cap, or why it stopped


@dataclass
class PullRequestAsk:
    """`/pr <title>`, as the environment's workflow is asked it."""

    environment_id: str
    conversation: str  # platform:conversation id
    title: str
    key: str  # the message workflow's id: a retried ask is answered once
