"""`GET /api/doctor`: the doctor's checks as JSON, behind the API's door: with API_TOKEN set, only with it."""

from __future__ import annotations

import asyncpg
import httpx
from pydantic import SecretStr
from temporalio.client import Client

from api.app import create_app
from isolator.settings import Settings
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram

API_TOKEN = "doctor-token-8e1f04c2b7"


async def test_the_doctor_answers_only_with_the_api_token(settings: Settings, db: asyncpg.Pool,
                                                          temporal: Client) -> None:
    telegram = FakeTelegram()
    await telegram.start()
    telegram.webhook.update(last_error_message="Connection timed out", pending_update_count=3)
    settings = settings.model_copy(update={"api_token": SecretStr(API_TOKEN), "agent_command_line": "",
                                           "telegram_bot_token": SecretStr(BOT_TOKEN),
                                           "telegram_api_url": telegram.api_url})
    app = create_app(settings, temporal=temporal, pool=db)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test",
                                     timeout=60) as api:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                refused = await api.get("/api/doctor", headers=headers)
                assert refused.status_code == 401, refused.text
            answered = await api.get("/api/doctor", headers={"Authorization": f"Bearer {API_TOKEN}"})
    finally:
        await telegram.stop()

    assert answered.status_code == 200, answered.text
    body = answered.json()
    checks = {check["name"].split(":")[0]: check for check in body["checks"]}
    assert body["ok"] is False
    assert checks["Telegram"]["ok"] is False and "Connection timed out" in checks["Telegram"]["problem"]
    assert checks["Telegram"]["fix"]
    assert checks["PostgreSQL"]["ok"] and checks["Temporal"]["ok"], body
    assert BOT_TOKEN not in answered.text
