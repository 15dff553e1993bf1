"""Which way Telegram's updates come in: TELEGRAM_MODE, and its default from PUBLIC_URL and
TELEGRAM_WEBHOOK_SECRET (isolator/telegram_settings.py)."""

from __future__ import annotations

import re

import pytest

from isolator.settings import ConfigurationError, load_settings

TOKEN = "7000001:AAisolator-test-token"


@pytest.fixture(autouse=True)
def no_telegram_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TELEGRAM_MODE", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("variables, mode, polls", [
    ({}, "polling", False),  # no token: nothing polls, as nothing was served before
    ({"TELEGRAM_BOT_TOKEN": TOKEN}, "polling", True),
    ({"TELEGRAM_BOT_TOKEN": TOKEN, "PUBLIC_URL": "https://isolator.example.org", "TELEGRAM_WEBHOOK_SECRET": "s"},
     "webhook", False),
    ({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": "secret"}, "webhook", False),
    ({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": "secret", "TELEGRAM_MODE": "webhook"}, "webhook", False),
    ({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": "secret", "TELEGRAM_MODE": "polling"}, "polling", True),
])
def test_the_mode_and_its_default(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], mode: str,
                                  polls: bool) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert (settings.telegram_mode, settings.telegram_polls) == (mode, polls)


def test_polling_without_a_token_or_an_unknown_mode_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_MODE", "polling")
    with pytest.raises(ConfigurationError, match="TELEGRAM_MODE=polling needs TELEGRAM_BOT_TOKEN"):
        load_settings()
    monkeypatch.setenv("TELEGRAM_MODE", "push")
    with pytest.raises(ConfigurationError, match="TELEGRAM_MODE: Input should be 'webhook' or 'polling'"):
        load_settings()


@pytest.mark.parametrize("variables, said", [
    ({"PUBLIC_URL": "https://isolator.example.org"}, "PUBLIC_URL (TELEGRAM_MODE=webhook) needs TELEGRAM_WEBHOOK_SECRET"),
    ({"TELEGRAM_MODE": "webhook"}, "TELEGRAM_MODE=webhook needs TELEGRAM_WEBHOOK_SECRET"),
    ({"PUBLIC_URL": "https://isolator.example.org", "TELEGRAM_WEBHOOK_SECRET": "not/allowed"},
     "TELEGRAM_WEBHOOK_SECRET: setWebhook takes 1 to 256 letters, digits, _ and - only"),
])
def test_a_webhook_without_a_usable_secret_is_refused_at_start(monkeypatch: pytest.MonkeyPatch,
                                                                variables: dict[str, str], said: str) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=re.escape(said)) as refused:
        load_settings()
    assert "TELEGRAM_MODE=polling" in str(refused.value) or "setWebhook" in str(refused.value)


def test_the_webhook_url_is_public_url_s_route_in_webhook_mode_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("PUBLIC_URL", "https://isolator.example.org/")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "secret")
    assert load_settings().telegram_webhook_url == "https://isolator.example.org/webhooks/telegram"
    monkeypatch.setenv("TELEGRAM_MODE", "polling")
    assert load_settings().telegram_webhook_url is None
