"""The real agent CLIs the acceptance tests drive (`make test` installs them), pointed at the fake
model APIs of tests/fakes/ through their own configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.chat_completions_api import FakeChatCompletionsApi
from tests.fakes.openai_api import MODEL, FakeOpenAiApi

ROOT = Path(__file__).resolve().parent.parent
CODEX = ROOT / ".tools" / "node_modules" / ".bin" / "codex"
AIDER = ROOT / ".tools" / "aider" / "bin" / "aider"


def claude_binary() -> Path:
    """Claude Code, as the claude-agent-sdk wheel (the test extra) bundles it."""
    import claude_agent_sdk

    binary = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    assert binary.is_file(), f"{binary} is missing: run `make install` (the test extra installs claude-agent-sdk)"
    return binary


def codex_binary() -> Path:
    assert CODEX.is_file(), f"{CODEX} is missing: run `make test`, which installs @openai/codex into .tools/"
    return CODEX


def aider_binary() -> Path:
    """Aider, in a venv of its own (its pins clash with ours)."""
    assert AIDER.is_file(), f"{AIDER} is missing: run `make test`, which installs aider-chat into .tools/aider"
    return AIDER


def use_fake_anthropic(monkeypatch: pytest.MonkeyPatch, api: FakeAnthropicApi) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")  # the fake is its only connection


def use_fake_openai(monkeypatch: pytest.MonkeyPatch, api: FakeOpenAiApi, codex_home: Path) -> None:
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(f'''model = "{MODEL}"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "fake"
base_url = "{api.url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 0
''')
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("FAKE_OPENAI_API_KEY", "sk-test")
    # The fake listens on loopback: the sandbox's egress reaches it because the operator's config.toml
    # names it, which no run can rewrite (activities/runs/agents/configs.py).


def use_fake_chat_completions(monkeypatch: pytest.MonkeyPatch, api: FakeChatCompletionsApi) -> None:
    """Aider through litellm; `--model openai/gpt-4o` in its AGENT_ARGS."""
    monkeypatch.setenv("OPENAI_API_BASE", f"{api.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
