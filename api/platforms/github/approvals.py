"""Answers to a run's requests as GitHub comments (docs/approvals.md): GitHub has no buttons, so a request's
comment lists the comments that answer it (activities/chat/platforms/github.py), and a comment that starts
with one, `/approve K7P2QX`, is a press. It goes the one answer path (api/approvals.answer_press), never to
the agent: a person refused by the allow rule decides nothing, and what was not taken is said in a comment
to the presser (GitHub has no private reply); a taken answer gets a 👍 and the request is edited to it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Mapping

import asyncpg
from temporalio.client import Client

from activities.chat.platforms.github import post_comment, react
from api.approvals import answer_press
from api.platforms.github.events import conversation_of, object_at, sender_of
from isolator.contracts.approvals import Press, PressOutcome
from isolator.settings import Settings
from isolator.trust import GitHubSender, admit_github

log = logging.getLogger(__name__)

# `/stop` alone stays the command that stops the run: only a code after it makes it an answer.
_ANSWER = re.compile(r"/(approve|deny|answer|revise|continue|stop)[ \t]+([A-Z0-9]{4,16})(?!\S)(.*)", re.DOTALL)
_OPTION = re.compile(r"\d{1,3}")
FOR_CONVERSATION = "for-conversation"


@dataclass(frozen=True)
class GitHubAnswer:
    verb: str  # approve, deny, answer, revise, continue, stop
    code: str
    rest: str  # what follows the code: a reason, an option, words
    conversation_id: str
    sender: GitHubSender
    comment_id: int


def parse_answer(event: str, payload: Mapping[str, Any], bot_mention: str) -> GitHubAnswer | None:
    """A new issue or PR comment that answers a request (after the bot's mention, if any); None otherwise."""
    if event != "issue_comment" or payload.get("action") != "created":
        return None
    comment = object_at(payload, "comment")
    body = comment.get("body")
    if not isinstance(body, str):
        return None
    text = body.strip()
    if text[:len(bot_mention)].lower() == bot_mention.lower():
        text = text[len(bot_mention):].lstrip()
    matched = _ANSWER.match(text)
    if matched is None:
        return None
    sender = sender_of(event, payload)
    if sender.is_bot and sender.login.lower().removesuffix("[bot]") == bot_mention.lstrip("@").lower():
        return None  # its own comment: the webhook's reading ignores it
    comment_id = comment.get("id")
    if not isinstance(comment_id, int) or isinstance(comment_id, bool):
        comment_id = 0  # only the 👍 needs it
    verb, code, rest = matched.groups()
    return GitHubAnswer(verb, code, rest.strip(), conversation_of(event, payload), sender, comment_id)


async def press_of(pool: asyncpg.Pool, answer: GitHubAnswer) -> Press:
    """The press a comment makes. `/approve` allows a tool call once, or approves a plan: the request says which."""
    choice, option, reason = answer.verb, None, answer.rest
    if answer.verb == "approve":
        reason = ""
        if answer.rest.split()[:1] == [FOR_CONVERSATION]:
            choice = "conversation"
        else:
            kind = await pool.fetchval("SELECT kind FROM approvals WHERE code = $1", answer.code)
            choice = "approve" if kind == "plan" else "once"
    elif answer.verb == "answer":
        if _OPTION.fullmatch(answer.rest):
            choice, option, reason = "option", int(answer.rest), ""
        else:
            choice = "text"
    elif answer.verb in ("continue", "stop"):
        reason = ""
    login = answer.sender.login
    return Press(answer.code, choice, "github", user=login.lower(), name=f"@{login}", option=option, reason=reason,
                 conversation_id=answer.conversation_id)


async def take_answer(answer: GitHubAnswer, pool: asyncpg.Pool, client: Client,
                      settings: Settings) -> PressOutcome | None:
    """Answer the request, and tell the presser; None when the allow rule refuses them (nothing is decided)."""
    refused = admit_github(answer.sender, settings).refused
    if refused is not None:
        log.info("github answer to %s by %s refused: %s", answer.code, answer.sender.login, refused)
        return None
    outcome = await answer_press(pool, client, settings, await press_of(pool, answer))
    try:
        if outcome.outcome == "taken":
            if answer.comment_id:
                await react(settings, answer.conversation_id, answer.comment_id, "+1")
        else:
            await post_comment(settings, answer.conversation_id, f"@{answer.sender.login}: {outcome.text}")
    except Exception as error:  # noqa: BLE001 - the answer stands; only telling it failed
        log.warning("could not tell %s on %s: %s", answer.sender.login, answer.conversation_id, error)
    return outcome
