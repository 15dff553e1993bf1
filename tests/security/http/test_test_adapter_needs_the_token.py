"""Row 10: with API_TOKEN set, the test adapter (which starts agents without the platforms' allow rules)
needs `Authorization: Bearer <API_TOKEN>`, whoever calls; it is served only when asked for."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from isolator.contracts.message import message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.security.fuzzing import message_workflows, workflow_exists

API_TOKEN = "adapter-token-51c7e9a2d4"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr(API_TOKEN), "agent_command_line": ""})


async def test_without_the_token_no_message_starts_anything(stack: Stack) -> None:
    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))  # another host
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as remote:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            body = {"conversationId": "intruder", "message": "rm -rf /", "messageId": f"intruder-{len(headers)}"}
            refused = await remote.post("/test/message", json=body, headers=headers)
            assert refused.status_code == 401 and "API_TOKEN" in refused.json()["detail"], refused.text
            assert not await workflow_exists(stack, message_workflow_id("test", body["messageId"]))
        assert (await remote.get("/test/messages/intruder")).status_code == 401
        assert await message_workflows(stack) == set()

        allowed = await remote.post("/test/message", params={"wait": "true"},
                                    json={"conversationId": "holder", "message": "hello", "messageId": "holder-1"},
                                    headers={"Authorization": f"Bearer {API_TOKEN}"})
    assert allowed.status_code == 200, allowed.text
    assert await workflow_exists(stack, message_workflow_id("test", "holder-1"))


async def test_the_adapter_is_served_only_when_asked_for(stack: Stack) -> None:
    assert Settings.model_fields["test_adapter"].default is False
    app = create_app(stack.settings.model_copy(update={"test_adapter": False}), temporal=stack.temporal,
                     pool=stack.db)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
        missing = await api.post("/test/message", json={"conversationId": "c", "message": "hi"},
                                 headers={"Authorization": f"Bearer {API_TOKEN}"})
    assert missing.status_code == 404
