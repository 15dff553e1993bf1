"""Replies to Slack: `chat.postMessage` into the conversation's thread, through slack-sdk.

A reply with buttons is posted as Block Kit (its text in `section` blocks, its buttons in `actions`
blocks); a press comes back to POST /webhooks/slack/interactions (api/platforms/slack/webhook.py)."""

from __future__ import annotations

from datetime import timedelta

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.exceptions import ApplicationError

from activities.chat.replies import Deliver, MessageGone, split_text
from isolator.contracts.approvals import Button
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings

# `ok: false` errors that say "try again later"; every other error needs a person to act
# (channel_not_found, not_in_channel, invalid_auth, is_archived, ...).
_TRANSIENT_ERRORS = {"ratelimited", "request_timeout", "service_unavailable", "fatal_error", "internal_error"}
# chat.update's answers for a message that cannot be edited any more: deleted, or too old.
_GONE_ERRORS = {"message_not_found", "cant_update_message", "edit_window_closed"}
# What a person can do about the common final errors.
_FIXES = {
    "channel_not_found": "invite the bot to the channel",
    "not_in_channel": "invite the bot to the channel",
    "is_archived": "unarchive the channel",
    "invalid_auth": "check SLACK_BOT_TOKEN",
    "not_authed": "check SLACK_BOT_TOKEN",
    "token_revoked": "check SLACK_BOT_TOKEN",
    "account_inactive": "check SLACK_BOT_TOKEN",
}
# Block Kit's limits: a section's text, a button's label, the elements of one actions block.
SECTION_TEXT, BUTTON_LABEL, BUTTONS_PER_BLOCK = 3000, 75, 25


def make_deliverer(settings: Settings) -> Deliver:
    token = settings.slack_bot_token
    client = AsyncWebClient(token=token.get_secret_value(), base_url=settings.slack_api_url) if token else None

    async def deliver(reply: ReplyInput, replacing: str | None = None) -> str | None:
        if client is None:
            raise ApplicationError(
                "SLACK_BOT_TOKEN is not set: cannot post replies to Slack",
                type="SlackNotConfigured",
                non_retryable=True,
            )
        channel, thread_ts = _split_conversation_id(reply.conversation_id)
        try:
            if replacing is not None:  # a message updated in place: its `ts`
                await _update(client, channel, replacing, reply.text, reply.buttons)
                return replacing
            # `text` stays set with blocks: it is the notification's and the screen reader's text.
            posted = await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=reply.text,
                                                   **({"blocks": blocks(reply.text, reply.buttons)}
                                                      if reply.buttons else {}))
            return posted.get("ts")
        except SlackApiError as error:
            raise _classify(error, channel) from error

    return deliver


def blocks(text: str, buttons: list[Button]) -> list[dict]:
    """The message as Block Kit: its text in mrkdwn sections, then its buttons (`action_id` `approval-<n>`)."""
    sections = [{"type": "section", "text": {"type": "mrkdwn", "text": part}}
                for part in split_text(text, SECTION_TEXT) if part]
    elements = [_button(number, button) for number, button in enumerate(buttons)]
    actions = [{"type": "actions", "elements": elements[start:start + BUTTONS_PER_BLOCK]}
               for start in range(0, len(elements), BUTTONS_PER_BLOCK)]
    return sections + actions


def _button(number: int, button: Button) -> dict:
    label = button.label if len(button.label) <= BUTTON_LABEL else button.label[: BUTTON_LABEL - 1] + "…"
    element = {"type": "button", "action_id": f"approval-{number}", "value": button.value,
               "text": {"type": "plain_text", "text": label}}
    # Slack knows `primary` and `danger`; a default button has no style at all.
    return {**element, "style": button.style} if button.style != "default" else element


async def _update(client: AsyncWebClient, channel: str, ts: str, text: str, buttons: list[Button]) -> None:
    try:
        # Without `blocks` Slack keeps the old ones, buttons included; an empty list takes them away.
        await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks(text, buttons) if buttons else [])
    except SlackApiError as error:
        data = getattr(error.response, "data", None)
        reason = data.get("error") if isinstance(data, dict) else None
        if reason in _GONE_ERRORS:
            raise MessageGone(f"Slack: {reason}") from None
        raise


def _split_conversation_id(conversation_id: str) -> tuple[str, str]:
    """`channel:thread_ts` (as the webhook builds it) into its channel and thread."""
    channel, _, thread_ts = conversation_id.partition(":")
    if not channel or not thread_ts:
        raise ApplicationError(
            f"not a Slack conversation id (expected `channel:thread_ts`): {conversation_id!r}",
            type="SlackBadConversation", non_retryable=True,
        )
    return channel, thread_ts


def _classify(error: SlackApiError, channel: str) -> ApplicationError:
    """Slack's answer as a Temporal error: retried when waiting can help, final otherwise."""
    response = error.response
    # A body that was not JSON leaves an aiohttp response here, with `status` for its code.
    code = getattr(response, "status_code", None) or getattr(response, "status", 0)
    data = getattr(response, "data", None)
    reason = data.get("error") if isinstance(data, dict) else None
    if code == 429 or code >= 500 or reason in _TRANSIENT_ERRORS:
        return ApplicationError(
            f"Slack chat.postMessage is unavailable for now (HTTP {code}, {reason or 'no error code'})",
            type="SlackUnavailable",
            next_retry_delay=_retry_after(response),
        )
    fix = f"; {_FIXES[reason]}" if reason in _FIXES else ""
    return ApplicationError(
        f"Slack refused chat.postMessage to channel {channel} (HTTP {code}, {reason or 'no error code'}){fix}",
        type="SlackRefused",
        non_retryable=True,
    )


def _retry_after(response: object) -> timedelta | None:
    """Slack's Retry-After (seconds) on rate limits; None leaves the activity's retry policy in charge."""
    headers = getattr(response, "headers", None) or {}  # aiohttp's case-insensitive headers
    value = headers.get("Retry-After")
    return timedelta(seconds=int(value)) if isinstance(value, str) and value.isdigit() else None
