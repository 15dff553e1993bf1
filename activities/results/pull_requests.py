"""Pull requests through PyGithub: open one (once), comment once per run, and read its state and checks.

Each call is safe to repeat: a PR is looked up by its head before one is opened, and a run's comment
carries a marker that is looked for before it is posted, so a worker killed half-way and retried
leaves one PR and one comment.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial

from github import Github

from activities.chat.platforms.github import _call
from isolator.contracts.results import PullRequestRef
from isolator.settings import Settings


@dataclass
class NewPullRequest:
    repository: str  # owner/name
    head: str  # the branch on origin
    base: str
    title: str
    body: str
    draft: bool


async def issue_title(settings: Settings, repository: str, number: int) -> str:
    return await _call(settings, repository, lambda github: github.get_repo(repository).get_issue(number).title,
                       f"reading issue #{number} of {repository}")


async def open_pull_request(settings: Settings, new: NewPullRequest) -> PullRequestRef:
    """The open PR from `head` to `base`, opened now unless it is there already."""
    return await _call(settings, new.repository, partial(_open, new), f"opening a pull request from `{new.head}` in {new.repository}")


def _open(new: NewPullRequest, github: Github) -> PullRequestRef:
    repo = github.get_repo(new.repository)
    owner = new.repository.split("/", 1)[0]
    for pull in repo.get_pulls(state="open", head=f"{owner}:{new.head}", base=new.base):
        return _ref(new.repository, pull, "opened")
    pull = repo.create_pull(base=new.base, head=new.head, title=new.title, body=new.body, draft=new.draft)
    return _ref(new.repository, pull, "opened")


async def followed_pull_request(settings: Settings, repository: str, number: int, head: str) -> PullRequestRef:
    """A PR someone else opened (a PR conversation's own), as a reference."""
    def read(github: Github) -> PullRequestRef:
        return _ref(repository, github.get_repo(repository).get_pull(number), "followed")
    return await _call(settings, repository, read, f"reading PR #{number} of {repository}")


async def comment_once(settings: Settings, repository: str, number: int, marker: str, body: str) -> None:
    """Comment on the PR unless a comment with `marker` (an HTML comment) is there already."""
    def post(github: Github) -> None:
        issue = github.get_repo(repository).get_issue(number)
        if any(marker in (comment.body or "") for comment in issue.get_comments()):
            return
        issue.create_comment(f"{body}\n\n{marker}")
    await _call(settings, repository, post, f"commenting on PR #{number} of {repository}")


async def pull_request_state(settings: Settings, recorded: PullRequestRef) -> tuple[PullRequestRef, str | None]:
    """The PR as GitHub says now, and its checks in words: its head's combined status and check runs."""
    return await _call(settings, recorded.repository, partial(_state, recorded), f"reading PR #{recorded.number} of {recorded.repository}")


def _state(recorded: PullRequestRef, github: Github) -> tuple[PullRequestRef, str | None]:
    repo = github.get_repo(recorded.repository)
    pull = repo.get_pull(recorded.number)
    commit = repo.get_commit(pull.head.sha)
    combined = commit.get_combined_status()
    counts: Counter[str] = Counter(status.state for status in combined.statuses)
    for run in commit.get_check_runs():
        counts[_check_run_state(run.status, run.conclusion)] += 1
    words = {"success": "passed", "failure": "failed", "error": "failed", "pending": "pending", "neutral": "neutral",
             "skipped": "skipped", "cancelled": "cancelled", "timed_out": "failed", "action_required": "waiting"}
    named: Counter[str] = Counter()
    for state, count in counts.items():
        named[words.get(state, state)] += count
    order = ["failed", "pending", "waiting", "passed", "neutral", "skipped", "cancelled"]
    checks = ", ".join(f"{named[name]} {name}" for name in sorted(named, key=lambda n: (order.index(n) if n in order
                                                                                       else len(order), n)))
    return _ref(recorded.repository, pull, recorded.origin, recorded), checks or None


def _check_run_state(status: str, conclusion: str | None) -> str:
    return "pending" if status != "completed" else (conclusion or "neutral")


def _ref(repository: str, pull: object, origin: str, recorded: PullRequestRef | None = None) -> PullRequestRef:
    merged = bool(getattr(pull, "merged", False))
    state = "merged" if merged else str(getattr(pull, "state", "open"))
    return PullRequestRef(
        repository=repository, number=pull.number, url=pull.html_url,  # type: ignore[attr-defined]
        remote_branch=pull.head.ref, base_branch=pull.base.ref,  # type: ignore[attr-defined]
        title=pull.title, draft=bool(pull.draft), origin=origin, state=state,  # type: ignore[attr-defined]
        checks=recorded.checks if recorded else None,
    )
