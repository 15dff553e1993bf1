"""GitHub through PyGithub: replies as issue comments, and what a webhook does not say about a PR.

GitHub has no buttons: a reply with buttons (a request of the agent's, docs/approvals.md) lists after its
text the comments that answer it (`/approve K7P2QX`), which api/platforms/github/approvals.py reads back.

PyGithub is synchronous: every call runs in a thread (asyncio.to_thread), with a client of its
own, since a PyGithub connection must not be shared between threads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import timedelta
from functools import partial
from typing import Any, Callable, TypeVar

from github import Auth, Github, GithubException, RateLimitExceededException, UnknownObjectException
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.github_app.credentials import NotInstalled, credentials_of
from activities.chat.replies import Deliver, MessageGone
from isolator.contracts.approvals import Button, PressedValue, parse_press_value
from isolator.contracts.message import IsolationHints, ReplyInput
from isolator.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

# GitHub's API answers within seconds; a hung request must end well inside the activities' 30 s.
_TIMEOUT_SECONDS = 10
# Enough for any real PR; the workflow only shares with the first linked issue that has a worktree.
_MAX_LINKED_ISSUES = 50

_CLOSING_ISSUES = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: %d) {
        nodes { number repository { nameWithOwner } }
      }
    }
  }
}
""" % _MAX_LINKED_ISSUES

# The comment that answers each choice a button carries: its command, and what follows the code.
ANSWER_COMMANDS = {
    "once": ("approve", ""),
    "conversation": ("approve", " for-conversation"),
    "deny": ("deny", " [reason]"),
    "option": ("answer", " {option}"),
    "text": ("answer", " <your words>"),
    "approve": ("approve", ""),
    "revise": ("revise", " [what to change]"),
    "continue": ("continue", ""),
    "stop": ("stop", ""),
}


def make_deliverer(settings: Settings) -> Deliver:
    async def deliver(reply: ReplyInput, replacing: str | None = None) -> str | None:
        if not await credentials_of(settings).configured():
            raise ApplicationError(
                "GITHUB_TOKEN is not set, nor a GitHub App: cannot post replies to GitHub",
                type="GitHubNotConfigured",
                non_retryable=True,
            )
        full_name, number = split_conversation_id(reply.conversation_id)
        # An update without buttons (a request edited to its answer) leaves the commands out: they go.
        answering = answering_text(reply.buttons)
        text = f"{reply.text}\n\n{answering}" if answering else reply.text

        def post(github: Github) -> str:
            # The issues API comments on pull requests too; lazy objects make this one POST.
            issue = github.get_repo(full_name).get_issue(number)
            if replacing is not None:  # a message updated in place: the comment, edited
                try:
                    issue.get_comment(int(replacing)).edit(text)
                except UnknownObjectException:  # 404: the comment was deleted
                    raise MessageGone(f"GitHub: comment {replacing} not found") from None
                return replacing
            return str(issue.create_comment(text).id)

        return await _call(settings, full_name, post, f"posting a comment on {reply.conversation_id}")

    return deliver


def answering_text(buttons: list[Button]) -> str:
    """The comments that answer a request, one per button with its label; "" without buttons of ours.

    A question's options take an answer in words too (`/answer K7P2QX <your words>`), listed once.
    """
    pressed = [(button.label, value) for button in buttons if (value := parse_press_value(button.value)) is not None
               and (value.choice != "option" or value.option is not None)]
    lines = [f"- `{_command(value)}`: {label}" for label, value in pressed]
    choices = {value.choice for _, value in pressed}
    if "option" in choices and "text" not in choices:
        code = next(value.code for _, value in pressed if value.choice == "option")
        lines.append(f"- `/answer {code} <your words>`: an answer of your own")
    return "Answer with a comment:\n" + "\n".join(lines) if lines else ""


def _command(value: PressedValue) -> str:
    verb, rest = ANSWER_COMMANDS[value.choice]
    return f"/{verb} {value.code}{rest.format(option=value.option)}"


async def post_comment(settings: Settings, conversation_id: str, text: str) -> None:
    """One comment on the issue or PR, outside the outbound log: a short word to one person."""
    full_name, number = split_conversation_id(conversation_id)
    await _call(settings, full_name, lambda github: github.get_repo(full_name).get_issue(number).create_comment(text),
                f"commenting on {conversation_id}")


async def react(settings: Settings, conversation_id: str, comment_id: int, reaction: str) -> None:
    """A reaction (`+1`, `eyes`, ...) on a comment of the issue or PR."""
    full_name, number = split_conversation_id(conversation_id)
    await _call(settings, full_name, lambda github: github.get_repo(full_name).get_issue(number).get_comment(comment_id)
                .create_reaction(reaction), f"reacting to comment {comment_id} on {conversation_id}")


async def complete_hints(settings: Settings, conversation_id: str, hints: IsolationHints) -> IsolationHints:
    """For a PR: its head (when the webhook did not carry it) and the issues of this repository it closes."""
    if hints.workflow_type != "pr":
        return hints
    full_name, number = split_conversation_id(conversation_id)
    completed = dataclasses.replace(hints, needs_completion=False)
    if hints.pr_head_branch is None or hints.pr_head_sha is None:
        head = await _call(settings, full_name, partial(_pull_head, full_name, number), f"reading PR {conversation_id}")
        completed.pr_head_branch, completed.pr_head_sha, completed.pr_is_fork = head
    if await credentials_of(settings).configured():
        what = f"reading the issues PR {conversation_id} closes"
        nodes = await _call(settings, full_name, partial(_closing_issues, full_name, number), what)
        completed.linked_issues = _same_repository_issues(nodes, full_name)
    # Without a token GitHub's GraphQL API refuses every query: the PR is handled without its links.
    return completed


async def merged_at_tip(settings: Settings, pull_request: str, tip: str) -> str | None:
    """Whether GitHub says the PR (`owner/repo#N`) was merged *and* its head is `tip`, in words.

    The branch may have moved on after the merge: a head that is not the tip proves nothing. None too
    when GitHub cannot be asked: merged is never assumed.
    """
    full_name, number = split_conversation_id(pull_request)
    try:
        merged, head = await _call(settings, full_name, partial(_pull_merged, full_name, number), f"reading PR {pull_request}")
    except Exception as error:  # noqa: BLE001 - the other checks stand; this one just says nothing
        log.warning("could not ask GitHub whether %s was merged: %s", pull_request, error)
        return None
    if merged and head == tip:
        return f"GitHub says PR #{number} was merged, and its head `{tip[:7]}` is the branch's tip"
    return None


def split_conversation_id(conversation_id: str) -> tuple[str, int]:
    """`owner/repo#N` (as the webhook builds it) into the repository's full name and the number."""
    full_name, _, number = conversation_id.rpartition("#")
    if "/" not in full_name or not number.isdigit():
        raise ApplicationError(
            f"not a GitHub conversation id (expected `owner/repo#N`): {conversation_id!r}",
            type="GitHubBadConversation", non_retryable=True,
        )
    return full_name, int(number)


def _pull_head(full_name: str, number: int, github: Github) -> tuple[str, str, bool]:
    pull = github.get_repo(full_name).get_pull(number)
    head_repo = pull.head.repo  # None when the fork was deleted
    is_fork = head_repo is None or head_repo.full_name != pull.base.repo.full_name
    return pull.head.ref, pull.head.sha, is_fork


def _pull_merged(full_name: str, number: int, github: Github) -> tuple[bool, str]:
    pull = github.get_repo(full_name).get_pull(number)
    return bool(pull.merged), pull.head.sha


def _closing_issues(full_name: str, number: int, github: Github) -> list[dict[str, Any]]:
    owner, name = full_name.split("/", 1)
    _, data = github.requester.graphql_query(_CLOSING_ISSUES, {"owner": owner, "name": name, "number": number})
    repository = (data.get("data") or {}).get("repository") or {}
    pull = repository.get("pullRequest") or {}
    return (pull.get("closingIssuesReferences") or {}).get("nodes") or []


def _same_repository_issues(nodes: list[dict[str, Any]], full_name: str) -> list[str]:
    """Issue numbers, as strings, of the closing references in this repository (owner and name ignore case)."""
    return [
        str(node["number"])
        for node in nodes
        if isinstance(node, dict) and isinstance(node.get("number"), int)
        and str(((node.get("repository") or {}).get("nameWithOwner") or "")).lower() == full_name.lower()
    ]


async def _call(settings: Settings, repository: str | None, work: Callable[[Github], T], what: str) -> T:
    """Run `work` with a fresh client in a thread, with the credentials of `repository` (owner/name);
    GitHub's refusals become Temporal errors. An installation token refused (401: it expired early, or was
    revoked) is renewed and the call made once more."""
    credentials = credentials_of(settings)
    try:
        access = await credentials.access(repository)
    except NotInstalled as error:
        raise ApplicationError(f"GitHub refused {what}: {error}", type="GitHubRefused", non_retryable=True) from None

    def run(auth: Auth.Auth | None) -> T:
        with Github(
            base_url=settings.github_api_url,
            auth=auth,
            timeout=_TIMEOUT_SECONDS,
            # Temporal retries the activity; PyGithub's own retries would sleep inside it for minutes.
            retry=None,
            # Reads, one after another, need no pause (GitHub's secondary limits are about concurrent
            # requests and writes): PyGithub's default 0.25 s made the loop's five reads of a red CI 1 s.
            # Writes keep its pause of 1 s.
            seconds_between_requests=None,
            lazy=True,
            user_agent="isolator",
        ) as github:
            return work(github)

    try:
        try:
            return await asyncio.to_thread(run, access.auth)
        except GithubException as error:
            if error.status != 401 or access.kind != "app" or repository is None:
                raise
            access = await credentials.renew(access, repository)
            return await asyncio.to_thread(run, access.auth)
    except GithubException as error:
        raise _classify(error, what) from error
    # Connection errors and timeouts (requests' exceptions) propagate: Temporal retries them.


def _classify(error: GithubException, what: str) -> ApplicationError:
    """GitHub's answer as a Temporal error: retried when waiting can help, final otherwise."""
    code = error.status
    data = error.data if isinstance(error.data, dict) else {}
    # GraphQL reports its refusals in `errors`, with HTTP 200 (PyGithub raises them as HTTP 400).
    errors = [str(item["message"]) for item in data.get("errors") or [] if isinstance(item, dict) and item.get("message")]
    graphql_errors = "; ".join(errors)
    reason = data.get("message") or graphql_errors or error.message or "no message"
    if code == 429 or code >= 500 or isinstance(error, RateLimitExceededException):
        return ApplicationError(
            f"GitHub is unavailable for now while {what} (HTTP {code}: {reason})",
            type="GitHubUnavailable",
            next_retry_delay=_retry_after(error.headers),
        )
    return ApplicationError(
        f"GitHub refused {what} (HTTP {code}: {reason}); check that the repository exists "
        "and that the service's GitHub App or GITHUB_TOKEN may access it",
        type="GitHubRefused",
        non_retryable=True,
    )


def _retry_after(headers: dict[str, str] | None) -> timedelta | None:
    """GitHub's Retry-After (seconds) on rate limits; None leaves the activity's retry policy in charge."""
    value = (headers or {}).get("retry-after")  # PyGithub lowercases header names
    return timedelta(seconds=int(value)) if isinstance(value, str) and value.isdigit() else None
