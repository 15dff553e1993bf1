"""`isolator doctor` against the platforms' fakes, the real PostgreSQL and Temporal, and a stand-in agent
program: configured right, every line is OK; configured wrong, each wrong part says what and the fix,
the exit code is 1, and no secret is printed. `isolator dev` says the problems alone at its start."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import free_port
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.discord_api import BOT_TOKEN as DISCORD_TOKEN, FakeDiscord
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN, FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN, FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
WRONG = {"GITHUB_TOKEN": "ghp_wrongToken000", "SLACK_BOT_TOKEN": "xoxb-wrong-token",
         "TELEGRAM_BOT_TOKEN": "7000001:AAwrong-token", "DISCORD_BOT_TOKEN": "wrong.discord.token",
         "ANTHROPIC_API_KEY": "sk-ant-never-printed"}


@dataclass
class Fakes:
    github: FakeGitHub
    slack: FakeSlack
    telegram: FakeTelegram
    discord: FakeDiscord
    model: FakeAnthropicApi


@pytest.fixture
async def fakes() -> AsyncIterator[Fakes]:
    running = Fakes(FakeGitHub(), FakeSlack(), FakeTelegram(), FakeDiscord(), FakeAnthropicApi())
    for fake in (running.github, running.slack, running.telegram, running.discord, running.model):
        await fake.start()
    yield running
    for fake in (running.github, running.slack, running.telegram, running.discord, running.model):
        await fake.stop()


def environment(settings: Settings, fakes: Fakes, agent: Path, **changed: str) -> dict[str, str]:
    """Only what the test sets (the machine's own tokens stay out), the fakes' URLs and the right tokens."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"),
           "DATABASE_URL": settings.database_url or "", "TEMPORAL_ADDRESS": settings.temporal_address,
           "ISOLATOR_DATA_DIR": str(settings.data_dir), "WORKTREE_BASE": str(settings.worktree_base),
           "GITHUB_API_URL": fakes.github.api_url, "GITHUB_TOKEN": GITHUB_TOKEN,
           "SLACK_API_URL": fakes.slack.api_url, "SLACK_BOT_TOKEN": SLACK_TOKEN,
           "TELEGRAM_API_URL": fakes.telegram.api_url, "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
           "DISCORD_API_URL": fakes.discord.api_url, "DISCORD_BOT_TOKEN": DISCORD_TOKEN,
           "AGENT": "claude", "AGENT_EXECUTABLE": str(agent), "ANTHROPIC_API_KEY": WRONG["ANTHROPIC_API_KEY"],
           "ANTHROPIC_BASE_URL": fakes.model.url}
    return {**env, **changed}


async def doctor(env: dict[str, str]) -> tuple[int, dict[str, str]]:
    """The exit code, and each line by what it checked (the words before its first `: `)."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "workers.cli", "doctor", cwd=ROOT, env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert not err.strip(), err.decode()
    lines = out.decode().splitlines()
    return process.returncode or 0, {line[6:].split(": ")[0]: line for line in lines}


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A stand-in for Claude Code that only says its version: no run starts in these tests."""
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\necho '2.0.0 (Claude Code)'\n")
    program.chmod(0o755)
    return program


async def test_configured_right_every_part_is_ok(settings: Settings, fakes: Fakes, agent: Path) -> None:
    code, lines = await doctor(environment(settings, fakes, agent))

    assert lines["GitHub"].startswith("OK") and "isolator-bot" in lines["GitHub"], lines
    assert lines["Slack"].startswith("OK"), lines
    assert lines["Telegram"].startswith("OK") and "@isolator" in lines["Telegram"], lines
    assert lines["Discord"].startswith("OK"), lines
    assert lines["Agent"].startswith("OK") and "2.0.0 (Claude Code)" in lines["Agent"], lines
    assert lines["Agent key (claude)"].startswith("OK"), lines
    assert lines["Model API"].startswith("OK") and fakes.model.url in lines["Model API"], lines
    assert lines["PostgreSQL"].startswith("OK") and lines["Temporal"].startswith("OK"), lines
    assert any(name.startswith("Disk") for name in lines), lines
    # This machine's sandbox and limits may lack a part; whatever fails, the exit code says so.
    assert code == (1 if any(line.startswith("FAIL") for line in lines.values()) else 0), lines


async def test_configured_wrong_each_part_says_what_and_the_fix(settings: Settings, fakes: Fakes,
                                                                   tmp_path: Path) -> None:
    fakes.telegram.webhook.update(url="https://isolator.example.org/webhooks/telegram", pending_update_count=7,
                                  last_error_date=1764300000,
                                  last_error_message="Wrong response from the webhook: 502 Bad Gateway")
    env = environment(settings, fakes, tmp_path / "nowhere" / "claude", **{
        name: WRONG[name] for name in ("GITHUB_TOKEN", "SLACK_BOT_TOKEN", "DISCORD_BOT_TOKEN")},
        PUBLIC_URL="https://isolator.example.org", TELEGRAM_WEBHOOK_SECRET="webhook-secret_1",
        ANTHROPIC_BASE_URL="http://169.254.169.254:8080")  # the cloud's metadata address: never let through
    env.pop("ANTHROPIC_API_KEY")

    code, lines = await doctor(env)

    assert code == 1
    assert "Bad credentials" in lines["GitHub"] and "set GITHUB_TOKEN" in lines["GitHub"], lines
    assert "invalid_auth" in lines["Slack"] and "SLACK_BOT_TOKEN" in lines["Slack"], lines
    assert "502 Bad Gateway" in lines["Telegram"] and "7 update(s) waiting" in lines["Telegram"], lines
    assert lines["Telegram"].startswith("FAIL") and "Fix: make PUBLIC_URL/webhooks/telegram" in lines["Telegram"]
    assert "Discord refuses the token" in lines["Discord"], lines
    assert lines["Agent"].startswith("FAIL") and "not found" in lines["Agent"] and "AGENT_EXECUTABLE" in lines["Agent"]
    assert lines["Agent key (claude)"].startswith("FAIL") and "ANTHROPIC_API_KEY" in lines["Agent key (claude)"]
    assert lines["Model API"].startswith("FAIL") and "link-local" in lines["Model API"], lines
    printed = "\n".join(lines.values())
    assert all(secret not in printed for secret in WRONG.values())


async def test_a_refused_telegram_token_is_said_without_it(settings: Settings, fakes: Fakes, agent: Path) -> None:
    code, lines = await doctor(environment(settings, fakes, agent, TELEGRAM_BOT_TOKEN=WRONG["TELEGRAM_BOT_TOKEN"]))

    assert code == 1
    assert lines["Telegram"].startswith("FAIL") and "refuses the token" in lines["Telegram"], lines
    assert WRONG["TELEGRAM_BOT_TOKEN"] not in "\n".join(lines.values())


async def test_a_setting_it_cannot_read_is_a_problem_too(settings: Settings, fakes: Fakes, agent: Path) -> None:
    code, lines = await doctor(environment(settings, fakes, agent, SANDBOX="maybe"))

    assert code == 1
    assert lines["Settings"].startswith("FAIL  Settings: invalid configuration: SANDBOX"), lines


def test_isolator_dev_says_only_the_problems_after_its_banner(start_dev, tmp_path: Path) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens there: GitHub cannot be reached
    dev = start_dev(tmp_path / "data", env={"GITHUB_TOKEN": WRONG["GITHUB_TOKEN"], "GITHUB_API_URL": nobody})
    deadline = time.monotonic() + 60
    while "Problems found (isolator doctor):" not in dev.stdout() and time.monotonic() < deadline:
        time.sleep(0.2)

    said = dev.stdout()
    assert "Press Ctrl-C to stop." in said.split("Problems found")[0], said
    assert "FAIL  GitHub: GITHUB_TOKEN (GET /user): GitHub cannot be reached" in said, said
    assert "OK    " not in said
    assert WRONG["GITHUB_TOKEN"] not in said + dev.logs()
