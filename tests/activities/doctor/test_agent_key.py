"""The doctor's agent key check: each agent's key found where the agent itself looks for it (its variables,
its login's file, Claude Code's settings.json, the variable Codex's provider names), and a fix that names
the variable it wants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.doctor.agent import key
from isolator.settings import Settings

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "LOCAL_MODEL_KEY")


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    for variable, name in (("CLAUDE_CONFIG_DIR", "claude"), ("CODEX_HOME", "codex")):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / name))
    return tmp_path


def test_claude_s_key_in_its_settings_or_a_key_helper_counts(settings: Settings, folders: Path) -> None:
    assert not key(settings, "claude").ok
    (folders / "claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-ant-x"}}))
    in_settings = key(settings, "claude")
    (folders / "claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "~/bin/anthropic-key"}))
    helper = key(settings, "claude")

    assert in_settings.ok and in_settings.detail == "set (ANTHROPIC_API_KEY in settings.json)"
    assert helper.ok and helper.detail == "set (apiKeyHelper in settings.json)"
    assert "sk-ant-x" not in in_settings.line()


def test_codex_s_config_alone_is_no_key(settings: Settings, folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folders / "codex" / "config.toml").write_text('model = "gpt-5-codex"\n')
    without = key(settings, "codex")
    (folders / "codex" / "auth.json").write_text("{}")
    logged_in = key(settings, "codex")

    assert not without.ok and "OPENAI_API_KEY" in without.fix
    assert logged_in.ok and logged_in.detail == "set (its login, auth.json)"


def test_codex_s_provider_names_its_key_s_variable(settings: Settings, folders: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (folders / "codex" / "config.toml").write_text(
        'model_provider = "local"\n[model_providers.local]\nbase_url = "http://127.0.0.1:1/v1"\n'
        'env_key = "LOCAL_MODEL_KEY"\n')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-the-one-it-reads")
    missing = key(settings, "codex")
    monkeypatch.setenv("LOCAL_MODEL_KEY", "sk-local")
    found = key(settings, "codex")

    assert not missing.ok and "set LOCAL_MODEL_KEY (the `env_key` of its provider" in missing.fix
    assert found.ok and found.detail == "set (LOCAL_MODEL_KEY)"
