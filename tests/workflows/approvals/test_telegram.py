"""Asking the human in a Telegram chat: an inline keyboard, a press as a callback query, a refusal
as an alert. The setting: conftest.py."""

from __future__ import annotations

from pathlib import Path

from tests.approvals import (
    TELEGRAM_OTHER, TOOL_LABELS, allow_once_script, allowed_push_answered, approval_code, approval_state,
    conversation_runs_when_ended, deny_script, until,
)
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.telegram_api import FakeTelegram
from tests.platforms import telegram as telegram_platform


async def telegram_message(stack: Stack, said: str) -> tuple[str, Path]:
    """A person's message in their private chat with the bot; its conversation id and worktree."""
    update_id = await telegram_platform.send(stack, message=telegram_platform.message(said))
    resolution = await telegram_platform.resolution(stack, update_id)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return f"{telegram_platform.PRIVATE['id']}:0", Path(resolution.working_path)


async def telegram_request(telegram: FakeTelegram) -> telegram_platform.Sent:
    await until(lambda: any(sent.buttons for sent in telegram.messages.values()), "a Telegram message with buttons")
    return telegram_platform.request_message(telegram)


def telegram_texts(telegram: FakeTelegram) -> list[str]:
    return [sent.text for _, sent in sorted(telegram.messages.items())]


async def test_telegram_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, telegram: FakeTelegram, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    conversation, _ = await telegram_message(stack, "push it please")
    asked = await telegram_request(telegram)
    assert asked.chat_id == telegram_platform.PRIVATE["id"] and "git push origin HEAD" in asked.text
    assert [button["text"] for button in asked.buttons] == TOOL_LABELS
    code = await approval_code(stack, "telegram", conversation)

    response = await telegram_platform.press(stack.api, asked, "Allow once", TELEGRAM_OTHER["id"],
                                             TELEGRAM_OTHER["username"])
    assert response.status_code == 200, response.text
    await until(lambda: bool(telegram.callback_answers), "the refusal, to the presser alone")
    (refusal,) = telegram.callback_answers
    assert refusal.show_alert and "Only the person who started this run" in (refusal.text or "")
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"

    response = await telegram_platform.press(stack.api, asked, "Allow once")
    assert response.status_code == 200, response.text
    await allowed_push_answered(stack, claude, f"telegram:{conversation}", "@ada", lambda: telegram_texts(telegram))
    edited = telegram.messages[asked.message_id]
    assert "Allowed once by @ada" in edited.text and edited.buttons == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_telegram_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, telegram: FakeTelegram, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    conversation, worktree = await telegram_message(stack, "touch denied.txt")
    asked = await telegram_request(telegram)

    response = await telegram_platform.press(stack.api, asked, "Deny")
    assert response.status_code == 200, response.text
    runs = await conversation_runs_when_ended(stack, f"telegram:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert "@ada denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in telegram_texts(telegram)), "the answer")
    edited = telegram.messages[asked.message_id]
    assert "Denied by @ada" in edited.text and edited.buttons == []
