"""The real Codex CLI in isolator's sandbox, against the fake OpenAI API: what the sandbox's egress
proxy refuses it is said in the conversation at once, and ends a run that would retry it for minutes.
Real git, PostgreSQL and Temporal, through the test adapter."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import AsyncIterator
from urllib.parse import urlsplit

import pytest

from tests.agent_clis import codex_binary, use_fake_openai
from tests.agent_runs import finished_run, replies_when
from tests.conftest import Stack
from tests.fakes.model_api import run, text, write
from tests.fakes.openai_api import FakeOpenAiApi


@pytest.fixture
async def openai(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAiApi]:
    """The stack running the real Codex, its provider the fake."""
    async with FakeOpenAiApi() as api:
        use_fake_openai(monkeypatch, api, stack.tmp_path / "codex-home")
        stack.settings.agent_driver, stack.settings.agent_executable = "codex", str(codex_binary())
        yield api


async def test_a_model_api_the_sandbox_refuses_is_said_at_once_and_ends_the_run(
    stack: Stack, repo: Path, openai: FakeOpenAiApi
) -> None:
    # The provider's address in AGENT_ARGS, which the egress proxy does not trust as it trusts the
    # operator's config.toml. 127.0.0.2 is loopback (nothing leaves the machine), and goes through the
    # proxy (NO_PROXY names 127.0.0.1 only), which refuses a loopback address that no entry names with
    # its port before connecting anywhere. Codex's own retries, as its users have them (4 and 5), would
    # hold the run for minutes.
    port = urlsplit(openai.url).port
    stack.settings.agent_args_line = (
        f"-c 'model_providers.fake.base_url=\"https://127.0.0.2:{port}/v1\"' "
        "-c model_providers.fake.request_max_retries=4 -c model_providers.fake.stream_max_retries=5")
    await stack.register(repo)
    conversation = f"refused-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    created = (await stack.say(conversation, "hello"))["result"]
    named = f"127.0.0.2:{port}"
    said = await replies_when(stack, conversation, lambda texts: any(
        named in text and "SANDBOX_ALLOWED_HOSTS" in text for text in texts), seconds=60)
    assert time.monotonic() - started < 20, f"heard late: {said}"
    record = await finished_run(stack, created["agentRunId"], seconds=60)
    assert record["status"] == "failed"
    assert time.monotonic() - started < 45, "the run ends instead of waiting out Codex's retries"
    final = await replies_when(stack, conversation, lambda texts: "— Failed" in texts[-1])
    assert named in final[-1] and "SANDBOX_ALLOWED_HOSTS" in final[-1], final[-1]
    # What Codex looks for once at every start and does without is left to the worker's log.
    assert not any("chatgpt.com" in text or "github.com" in text for text in final), final
    assert openai.calls == [], "refused before any connection"


async def test_codex_with_its_users_usual_configuration_writes_files_in_the_sandbox(
    stack: Stack, repo: Path, openai: FakeOpenAiApi
) -> None:
    # Its users' configuration (tests/agent_clis.py): Codex's own sandbox on (workspace-write), nobody asked (never).
    assert 'sandbox_mode = "workspace-write"' in (stack.tmp_path / "codex-home" / "config.toml").read_text()
    await stack.register(repo)
    conversation = f"usual-{uuid.uuid4().hex[:6]}"
    openai.then(write("src/relay.txt", "relayed"), run("cat src/relay.txt"), text("Wrote src/relay.txt."))
    created = (await stack.say(conversation, "write src/relay.txt"))["result"]
    record = await finished_run(stack, created["agentRunId"])
    final = await replies_when(stack, conversation, lambda texts: "— " in texts[-1])
    assert record["status"] == "done", final[-1]
    outputs = [item for call in openai.calls for item in call.body.get("input", [])
               if str(item.get("type", "")).endswith("_call_output")]
    assert outputs and not any("Failed to write" in json.dumps(item) for item in outputs), outputs
    assert (Path(created["workingPath"]) / "src" / "relay.txt").read_text().strip() == "relayed"
    assert "• wrote `src/relay.txt`\n• ran `cat src/relay.txt` (exit 0)" in final[-1], final[-1]
