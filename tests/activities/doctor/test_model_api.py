"""The doctor's model API check: the agent's model API asked the way a sandboxed run asks it, through a real
egress proxy (activities/sandbox/egress_proxy.py) and its allow-list, against the fake model API on
loopback; configured right, out of reach, and refused by the allow-list."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest

from activities.doctor.model_api import model_api_checks
from activities.runs.agents import EXAMPLE_AGENT
from isolator.settings import Settings
from tests.conftest import free_port
from tests.fakes.anthropic_api import FakeAnthropicApi

MODEL_VARIABLES = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE", "SANDBOX_ALLOWED_HOSTS")


@pytest.fixture
async def model() -> AsyncIterator[FakeAnthropicApi]:
    async with FakeAnthropicApi() as fake:
        yield fake


@pytest.fixture
def claude(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Claude Code as the agent (a stand-in program: only its model API is asked), its folder the test's own."""
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return settings.model_copy(update={"agent_driver": "claude", "agent_executable": str(tmp_path / "claude"),
                                       "agent_command_line": None, "sandbox": "on", "sandbox_network": "egress"})


async def test_the_model_api_answers_through_the_egress_proxy(claude: Settings, model: FakeAnthropicApi,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.url)  # named with its port: the allow-list lets loopback through

    [check] = await model_api_checks(claude)

    assert check.ok, check
    assert check.name == f"Model API: {model.url} (ANTHROPIC_BASE_URL), through the egress proxy"
    assert check.detail == "it answers (HTTP 404 without a key)"
    # The proxy forwards a plain-http request with `Connection: close` of its own: it went through it.
    assert [(call.path, call.headers.get("connection")) for call in model.calls] == [("/", "close")]


async def test_a_model_api_out_of_reach_says_so_and_the_fix(claude: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", nowhere)

    [check] = await model_api_checks(claude)

    assert not check.ok and "it cannot be reached" in check.problem and "could not be reached" in check.problem
    assert "start the model API, or correct ANTHROPIC_BASE_URL" in check.fix


@pytest.mark.parametrize("url, reason, fix", [
    ("http://127.0.0.1/", "127.0.0.1 is a loopback or private address (list it with its port to allow it)",
     "name the port in ANTHROPIC_BASE_URL (127.0.0.1:80), or add `127.0.0.1:80` to SANDBOX_ALLOWED_HOSTS"),
    ("http://169.254.169.254:8080", "169.254.169.254 is link-local or reserved",
     "point ANTHROPIC_BASE_URL elsewhere: a link-local or reserved address (the cloud's metadata) is never let"),
])
async def test_a_model_api_the_allow_list_refuses_is_said_before_any_request(
    claude: Settings, model: FakeAnthropicApi, monkeypatch: pytest.MonkeyPatch, url: str, reason: str, fix: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)

    [check] = await model_api_checks(claude)

    assert not check.ok and "the egress proxy refuses" in check.problem and reason in check.problem, check
    assert fix in check.fix, check.fix
    assert model.calls == []


async def test_codex_s_provider_is_the_one_asked(claude: Settings, model: FakeAnthropicApi, tmp_path: Path) -> None:
    codex = claude.model_copy(update={"agent_driver": "codex", "agent_executable": str(tmp_path / "codex")})
    (tmp_path / "codex-home").mkdir()
    (tmp_path / "codex-home" / "config.toml").write_text(
        f'model_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "{model.url}/v1"\n')

    [check] = await model_api_checks(codex)

    assert check.ok and "the `base_url` of Codex's provider `local` (config.toml)" in check.name, check
    assert [call.path for call in model.calls] == ["/v1"]


async def test_without_the_proxy_it_is_asked_straight_and_with_no_network_it_is_a_problem(
    claude: Settings, model: FakeAnthropicApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model.url)

    [open_network] = await model_api_checks(claude.model_copy(update={"sandbox_network": "open"}))
    [no_network] = await model_api_checks(claude.model_copy(update={"sandbox_network": "off"}))

    assert open_network.ok and "through the egress proxy" not in open_network.name
    assert not no_network.ok and "SANDBOX_NETWORK=off" in no_network.problem and "egress" in no_network.fix


async def test_the_example_agent_has_no_model_api_to_ask(settings: Settings) -> None:
    example = settings.model_copy(update={"agent_driver": "claude", "agent_executable": str(EXAMPLE_AGENT),
                                          "agent_command_line": None})
    assert await model_api_checks(example) == []
