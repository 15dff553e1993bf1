"""Reading a GitHub webhook payload: which conversation, what text, which hints, or why it is ignored.

Pure functions, no I/O: the webhook decides with them what to hand to a MessageWorkflow.
Payload shapes are GitHub's documented webhook events (`issues`, `issue_comment`,
`pull_request`, `pull_request_review_comment`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping
from urllib.parse import parse_qs

from isolator.contracts.message import IsolationHints
from isolator.pr_feedback_texts import fenced
from isolator.trust import GitHubSender

PLATFORM = "github"

# GitHub owner and repository names: letters, digits, `.`, `_`, `-`. Anything else would make a
# conversation id (`owner/repo#N`) the deliverer cannot split back.
_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")

# (event, action) pairs that carry something to answer, and the ones that close the conversation.
_MESSAGE_ACTIONS = {
    ("issues", "opened"),
    ("issue_comment", "created"),
    ("pull_request", "opened"),
    ("pull_request_review_comment", "created"),
}
_CLOSE_ACTIONS = {("issues", "closed"), ("pull_request", "closed")}


class PayloadError(ValueError):
    """The payload cannot be read; the message says what is wrong, for the 400 answer."""


@dataclass(frozen=True)
class GitHubMessage:
    conversation_id: str
    text: str
    kind: Literal["message", "closed"]
    hints: IsolationHints
    # who wrote it, for the allow rule; None for a close, which needs no rule
    sender: GitHubSender | None = None


@dataclass(frozen=True)
class Ignored:
    reason: str


def conversation_id(full_name: str, number: int) -> str:
    """One conversation per issue or pull request: `owner/repo#N`."""
    return f"{full_name}#{number}"


def decode_payload(body: bytes, content_type: str) -> Mapping[str, Any]:
    """The JSON object of a delivery, sent as `application/json` or as the form field `payload`."""
    if content_type.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded":
        try:
            fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            raise PayloadError("the form body cannot be read") from None
        if len(fields.get("payload", [])) != 1:
            raise PayloadError("a form delivery needs exactly one `payload` field")
        text: str | bytes = fields["payload"][0]
    else:
        text = body
    try:
        payload = json.loads(text)
    except ValueError:
        raise PayloadError("the body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise PayloadError("the payload must be a JSON object")
    return payload


def parse_event(event: str, payload: Mapping[str, Any], bot_mention: str) -> GitHubMessage | Ignored:
    """What a delivery asks for; raises PayloadError when a handled event lacks a field it needs."""
    action = payload.get("action")
    action = action if isinstance(action, str) else None  # events like `push` have none
    if (event, action) in _CLOSE_ACTIONS:
        # Closing needs no mention, and counts whoever closed it: a bot closing an issue still ends it.
        return _build(event, payload, text="", kind="closed")
    if (event, action) not in _MESSAGE_ACTIONS:
        return Ignored(f"{event} events with action {action!r} are not handled")
    # Read the whole event first: a malformed one is refused (400) whether or not it mentions the bot.
    message = _build(event, payload, text=_text(event, payload), kind="message")
    sender = sender_of(event, payload)
    if sender.is_bot and sender.login.lower().removesuffix("[bot]") == bot_mention.lstrip("@").lower():
        return Ignored("sent by this service")  # its own comments never start work: no reply loops
    if not mentions(message.text, bot_mention):
        return Ignored(f"does not mention {bot_mention}")
    return dataclasses.replace(message, sender=sender)  # other bots are refused unless GITHUB_ALLOWED_BOTS


def sender_of(event: str, payload: Mapping[str, Any]) -> GitHubSender:
    """The sender and their `author_association` on what they wrote; a payload without one counts as NONE."""
    sender = payload.get("sender")
    sender = sender if isinstance(sender, Mapping) else {}
    login = sender.get("login")
    if not isinstance(login, str) or not login:
        raise PayloadError("`sender.login` is missing or not a string")
    source = "comment" if event in ("issue_comment", "pull_request_review_comment") else (
        "issue" if event == "issues" else "pull_request")
    association = object_at(payload, source).get("author_association")
    return GitHubSender(login=login, association=association if isinstance(association, str) else "NONE",
                        is_bot=sender.get("type") == "Bot")


def mentions(text: str, bot_mention: str) -> bool:
    """True when `text` mentions the bot as a whole name: `@isolator`, not `@isolator-dev` or `a@isolator.io`."""
    pattern = rf"(?<![\w@.-]){re.escape(bot_mention)}(?![\w-])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def _text(event: str, payload: Mapping[str, Any]) -> str:
    """The comment's body for comment events, else the issue's or PR's description (null when empty)."""
    if event in ("issue_comment", "pull_request_review_comment"):
        source = "comment"
    else:
        source = "issue" if event == "issues" else "pull_request"
    body = object_at(payload, source).get("body")
    if body is not None and not isinstance(body, str):
        raise PayloadError(f"`{source}.body` must be a string or null")
    if event == "pull_request_review_comment" and body:
        return _located(object_at(payload, "comment"), body)
    return body or ""


def _located(comment: Mapping[str, Any], body: str) -> str:
    """An inline comment as the agent needs it: where it is (file, line or range, the diff's hunk), then its text."""
    path, line, start = comment.get("path"), comment.get("line"), comment.get("start_line")
    if not isinstance(path, str) or not path:
        return body
    where = (f"lines {start}-{line}" if isinstance(start, int) and isinstance(line, int) and start != line
             else f"line {line}" if isinstance(line, int) else "a line no longer in the diff")
    hunk = comment.get("diff_hunk")
    shown = f"\n{fenced(hunk, 'diff')}" if isinstance(hunk, str) and hunk else ""
    return f"{body}\n\n(An inline comment on `{path}`, {where}.){shown}"


def conversation_of(event: str, payload: Mapping[str, Any]) -> str:
    """The conversation (`owner/repo#N`) a delivery belongs to."""
    return _build(event, payload, text="", kind="message").conversation_id


def _build(event: str, payload: Mapping[str, Any], text: str, kind: Literal["message", "closed"]) -> GitHubMessage:
    repository = object_at(payload, "repository")
    full_name = string_at(repository, "repository", "full_name")
    if not _FULL_NAME.fullmatch(full_name):
        raise PayloadError("`repository.full_name` must be `owner/name`")
    hints = IsolationHints(
        repository_url=string_at(repository, "repository", "html_url"),
        clone_url=string_at(repository, "repository", "clone_url"),
    )
    if event in ("issues", "issue_comment"):
        issue = object_at(payload, "issue")
        number = number_at(issue, "issue")
        # GitHub sends a comment on a pull request as an `issue_comment` whose issue has `pull_request`.
        is_pr = event == "issue_comment" and issue.get("pull_request") is not None
        hints.workflow_type = "pr" if is_pr else "issue"
        # The payload does not carry the PR's head; complete_hints asks the API.
        hints.needs_completion = is_pr
    else:
        pull = object_at(payload, "pull_request")
        number = number_at(pull, "pull_request")
        hints.workflow_type = "pr"
        hints.pr_head_branch, hints.pr_head_sha, hints.pr_is_fork = _head(pull)
        hints.needs_completion = True  # for the issues the PR closes, which only GraphQL knows
    hints.workflow_id = str(number)
    return GitHubMessage(conversation_id(full_name, number), text, kind, hints)


def _head(pull: Mapping[str, Any]) -> tuple[str, str, bool]:
    """The PR's branch, its head commit, and whether it comes from another repository."""
    head, base = object_at(pull, "pull_request.head"), object_at(pull, "pull_request.base")
    head_repo = head.get("repo")
    base_name = string_at(object_at(base, "pull_request.base.repo"), "pull_request.base.repo", "full_name")
    # A fork that was deleted leaves `head.repo` null: it is still not this repository's branch.
    is_fork = not isinstance(head_repo, Mapping) or head_repo.get("full_name") != base_name
    return string_at(head, "pull_request.head", "ref"), string_at(head, "pull_request.head", "sha"), is_fork


# The payload readers: each names the field it wanted in its error, for the 400 answer.
def object_at(container: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    value = container.get(path.rsplit(".", 1)[-1])
    if not isinstance(value, Mapping):
        raise PayloadError(f"`{path}` is missing or not an object")
    return value


def string_at(container: Mapping[str, Any], path: str, key: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value:
        raise PayloadError(f"`{path}.{key}` is missing or not a string")
    return value


def number_at(container: Mapping[str, Any], path: str) -> int:
    value = container.get("number")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PayloadError(f"`{path}.number` is missing or not a positive integer")
    return value
