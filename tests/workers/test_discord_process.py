"""Discord's Gateway listener as the processes a user runs: `isolator dev` with DISCORD_BOT_TOKEN set,
and `isolator discord` on its own, against the fake Discord."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from isolator.settings import Settings
from tests.dev_process import ISOLATOR, dev_env
from tests.fakes.discord_api import APPLICATION_ID, BOT_TOKEN, FakeDiscord


def discord_env(fake: FakeDiscord, token: str = BOT_TOKEN) -> dict[str, str]:
    return {"DISCORD_BOT_TOKEN": token, "DISCORD_API_URL": fake.api_url, "DISCORD_APPLICATION_ID": APPLICATION_ID}


async def test_dev_listens_on_discords_gateway_and_registers_the_slash_command(start_dev, tmp_path: Path) -> None:
    fake = FakeDiscord()
    await fake.start()
    try:
        dev = await asyncio.to_thread(start_dev, tmp_path / "data", env=discord_env(fake))
        await fake.wait_ready(timeout=30)
        assert [identify["token"] for identify in fake.identifies] == [BOT_TOKEN]
        assert [command["name"] for command in fake.commands] == ["isolator"]
        assert "Discord:      listening on the Gateway" in dev.stdout()
    finally:
        await fake.stop()


async def test_isolator_discord_says_what_is_wrong_with_its_configuration(settings: Settings, tmp_path: Path) -> None:
    env = {**dev_env(tmp_path), "DATABASE_URL": str(settings.database_url), "TEMPORAL_ADDRESS": settings.temporal_address}
    unset = await asyncio.to_thread(subprocess.run, [ISOLATOR, "discord"], env=env, capture_output=True, timeout=60)
    assert (unset.returncode, unset.stderr.decode().strip()) == (2, "isolator: DISCORD_BOT_TOKEN is not set")

    fake = FakeDiscord()
    await fake.start()
    try:
        wrong_token = "MTIz.wrong-token.for-the-test"
        refused = await asyncio.to_thread(subprocess.run, [ISOLATOR, "discord"], env={**env, **discord_env(fake, wrong_token)},
                                          capture_output=True, timeout=60)
    finally:
        await fake.stop()
    assert refused.returncode == 1, refused.stderr.decode()
    assert "isolator: Discord rejected DISCORD_BOT_TOKEN" in refused.stderr.decode()
    assert wrong_token not in refused.stderr.decode() + refused.stdout.decode()
