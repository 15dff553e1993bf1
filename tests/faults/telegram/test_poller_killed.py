"""Telegram's poller SIGKILLed after an update's workflow has started and before its offset was committed:
after the restart Telegram gives the same update again, and it is handled once (one workflow, its
replies once each), and an update that arrived while the poller was down is not lost. A real poller
process (tests/faults/paused_poller.py) and python-telegram-bot against a fake Bot API, the workflows on
the tests' workers, real git, PostgreSQL and Temporal."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from isolator.contracts.message import message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_TOKEN, BOT_USER, FakeTelegram
from tests.faults.conftest import WorkerProcess, wait_for
from tests.gitrepos import first_replies
from tests.platforms.telegram import USER, started
from tests.telegram_polling import handled, update_in_new_chat
from workflows.naming import thread_branch

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"telegram_webhook_secret": None, "telegram_mode_setting": "polling"})


def poller_process(settings: Settings, fake: FakeTelegram, logs: Path) -> WorkerProcess:
    return WorkerProcess(settings, logs, program="tests.faults.paused_poller", name="poller", extra_env={
        "TELEGRAM_MODE": "polling", "TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_URL": fake.api_url,
        "TELEGRAM_ALLOWED_USERS": str(USER["id"]),
    })


async def committed_offset(stack: Stack) -> int | None:
    return await stack.db.fetchval("SELECT next_offset FROM telegram_offsets WHERE bot_id = $1", BOT_USER["id"])


async def test_a_poller_killed_before_committing_the_offset_loses_nothing_and_handles_nothing_twice(
    stack: Stack, fake: FakeTelegram, repo: Path, tmp_path: Path
) -> None:
    await stack.register(repo)
    await stack.db.execute("DELETE FROM telegram_offsets")
    poller = poller_process(stack.settings, fake, tmp_path)
    try:
        for round_number in range(ROUNDS):
            marker = tmp_path / f"paused-{round_number}"
            (chat, update), (later_chat, later) = update_in_new_chat("fix it"), update_in_new_chat("and this")
            fake.push(update)
            before = await committed_offset(stack)
            poller.start(ISOLATOR_FAULT_POLLER_PAUSE="before-commit", ISOLATOR_FAULT_MARKER=str(marker))
            await wait_for(marker, poller)
            assert await started(stack, update["update_id"]), "paused after the workflow's start"
            poller.kill()
            assert await committed_offset(stack) == before, "killed before the offset's commit"
            fake.push(later)  # arrives while no poller runs

            poller.start()
            for _ in range(600):
                if await committed_offset(stack) == later["update_id"] + 1:
                    break
                await asyncio.sleep(0.05)
            assert await committed_offset(stack) == later["update_id"] + 1, poller.log_text()[-3000:]
            poller.stop()

            for chat_id, each in ((chat, update), (later_chat, later)):
                await handled(stack, each["update_id"])
                workflow_id = message_workflow_id("telegram", str(each["update_id"]))
                for _ in range(100):  # visibility trails the history by a moment
                    runs = [run async for run in stack.temporal.list_workflows(f"WorkflowId = '{workflow_id}'")]
                    if runs:
                        break
                    await asyncio.sleep(0.1)
                assert len(runs) == 1, "one workflow for the update"
                branch = thread_branch(f"telegram:{chat_id}:0")
                assert [sent.text for sent in fake.sent if sent.chat_id == chat_id] == first_replies(branch, repo)
        assert BOT_TOKEN not in poller.log_text(), "the token is in every Bot API URL: no request line is logged"
    finally:
        poller.stop()
