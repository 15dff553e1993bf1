"""`isolator dev` with a Telegram bot token and no public URL polls Telegram by itself: the real dev
process against a fake Bot API on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from tests.platforms.telegram import PRIVATE, USER, _update_ids, message
from tests.telegram_polling import until


async def test_dev_polls_telegram_by_default_without_a_public_url(
    start_dev: Callable, fake: FakeTelegram, tmp_path: Path
) -> None:
    fake.push({"update_id": next(_update_ids), "message": message("/help")})
    env = {"TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_URL": fake.api_url,
           "TELEGRAM_ALLOWED_USERS": str(USER["id"])}
    # In a thread: the fake answers from this event loop while dev starts.
    dev = await asyncio.to_thread(start_dev, tmp_path / "data", None, env)

    assert "Telegram:     polling for updates (TELEGRAM_MODE=polling)" in dev.stdout(), dev.logs()
    await until(lambda: any(sent.chat_id == PRIVATE["id"] for sent in fake.sent))
    assert fake.webhook_url is None and fake.calls("deleteWebhook") >= 1
    assert BOT_TOKEN not in dev.logs()
