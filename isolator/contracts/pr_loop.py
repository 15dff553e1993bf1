"""The pull-request loop (docs/pr-loop.md): a review or a red CI on a PR the service works on comes back
to the agent as one run in the PR's conversation, within caps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FeedbackKind = Literal["review", "ci", "fix_ci", "update_branch"]


@dataclass
class ReviewComment:
    """One inline comment of a review, as GitHub gives it."""

    id: int
    path: str
    line: int | None  # the last line it is on (None: the line is gone from the diff)
    start_line: int | None  # the first line of a multi-line comment, else None
    diff_hunk: str
    body: str
    author: str


@dataclass
class ReviewFeedback:
    repository: str  # owner/name
    number: int
    review_id: int | None  # None: an inline comment made alone
    state: str  # "changes_requested", "commented", "approved" (lower case, as webhooks say)
    body: str
    author: str
    comments: list[ReviewComment] = field(default_factory=list)


@dataclass
class FailedCheck:
    """A check that failed on a head: its output, annotations and, for GitHub Actions, its log's failing lines."""

    name: str
    conclusion: str  # "failure", "timed_out", "cancelled", "action_required", "startup_failure"
    title: str = ""
    summary: str = ""
    text: str = ""
    annotations: list[str] = field(default_factory=list)  # "path:line: message"
    log_excerpt: str = ""  # cut to the lines that matter; empty when there is no log


@dataclass
class CiFailure:
    repository: str
    head_sha: str
    checks: list[FailedCheck] = field(default_factory=list)


CiState = Literal["green", "red", "pending"]


@dataclass
class ThreadReply:
    comment_id: int
    body: str


@dataclass
class FeedbackEvent:
    """What a webhook (or `/fix-ci`, `/update-branch`) asks of a PR's work, before anything is looked up.
    `key` makes it happen once: the review's id, or the head commit for CI."""

    kind: FeedbackKind
    repository: str  # owner/name
    key: str
    number: int | None = None  # the PR, when the event names it
    head_sha: str | None = None
    head_branch: str | None = None
    # CI: the suite's or workflow run's conclusion; "base_moved": a push to the default branch (head_sha, head_branch
    # are the base's); "check_mergeable": one PR's part of it, which runs only if GitHub says it no longer merges
    conclusion: str | None = None
    review_id: int | None = None
    comment_id: int | None = None  # an inline comment made alone
    sender: str = ""  # who asked (a review's author, `/fix-ci`'s sender); CI events name no person
    asked_from: str | None = None  # platform:conversation of a `/fix-ci` or `/update-branch`
    pusher: str | None = None  # CI: who pushed the head (a workflow run's actor); the App's `<slug>[bot]` is us


def workflow_key(event: FeedbackEvent) -> str:
    """One loop workflow per review, per red head, per green report and per command: redeliveries, and a
    check suite and a workflow run of the same head, join it."""
    return f"pr-loop:{event.repository}:{event.key}"


@dataclass
class PullRequestWork:
    """The PR's work here: its environment, the conversation whose work it is, and the loop's counts."""

    codebase_id: str
    codebase: str
    environment_id: str
    branch: str  # the local branch
    number: int
    url: str
    conversation: str  # platform:conversation_id that asked for the work
    pushed_by_service: bool  # the event's head commit is one the service pushed
    attempts: int  # fix runs in a row whose pushed heads stayed red
    autofix: bool  # this codebase lets CI failures start runs (`[results] autofix`)
    # The PR's own conversation on GitHub, when it works in the same worktree but is not `conversation`
    # (someone wrote on the service's PR, or asked `/fix-ci` there): it hears the green head too.
    pr_conversation: str | None = None


@dataclass
class LoopDecision:
    outcome: Literal["run", "ignored", "stopped", "passed"]
    reason: str = ""
    run_id: str | None = None


@dataclass
class CiRecord:
    """A head's CI as the loop records it for the PR of `branch`."""

    codebase_id: str
    branch: str
    sha: str
    state: CiState = "red"
    reason: str = ""  # why fixing stopped
    of_base: bool = False  # `sha` is the base's new head (a merge of it is the attempt), not a CI verdict


@dataclass
class RunEnd:
    status: str  # agent_runs.status once ended: "done", "failed", "timed_out", "stopped", "interrupted", ...
    answer: str
    pushed: str | None  # the head the service pushed after it, if it pushed


@dataclass
class ThreadRepliesInput:
    repository: str
    number: int
    replies: list[ThreadReply]
    marker: str  # an HTML comment naming the run: a retried step posts each reply once


@dataclass
class PullRequestNote:
    repository: str
    number: int
    text: str
    marker: str


@dataclass
class PullRequestLoopInput:
    """The loop workflow's input: the event, and the operator's caps as they were when it came."""

    event: FeedbackEvent
    autofix: bool = True  # AUTOFIX
    max_attempts: int = 3  # AUTOFIX_MAX_ATTEMPTS
    ready_when_green: bool = False  # RESULTS_READY_WHEN_GREEN


@dataclass
class AskLoop:
    """`/fix-ci` or `/update-branch` in a conversation: its worktree's PR, asked by hand."""

    kind: FeedbackKind
    codebase_id: str
    branch: str
    asked_from: str  # platform:conversation_id
    key: str  # the message workflow's id: the command happens once
