"""Discord's allow rule, narrowed to a role: a member without it gets one reply in the channel (no
thread), a slash command one follow-up, and nothing changes; a member with it works as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.discord_api import BOT_USER, CHANNEL_ID, GUILD_ID, PERSON, ROLE_ID, FakeDiscord, snowflake
from tests.platforms.discord import post, resolution, slash_command
from tests.trust.checks import nothing_changed, recorded_as_refused

MENTION = f"<@{BOT_USER['id']}>"
REFUSED_MEMBER = ("In this server I only take requests from members with a role in `DISCORD_ALLOWED_ROLES` or "
                  "from the people in `DISCORD_ALLOWED_USERS`. To allow you, give yourself one of those roles, or "
                  f"add your user id `{PERSON['id']}` to `DISCORD_ALLOWED_USERS`.")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"discord_allowed_guilds": frozenset({GUILD_ID}),
                                       "discord_allowed_roles": frozenset({ROLE_ID}),
                                       "discord_allowed_users": frozenset()})


async def test_a_member_without_an_allowed_role_gets_one_reply_and_no_thread(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    first = fake.message_create(f"{MENTION} run this for me")
    await fake.dispatch("MESSAGE_CREATE", first)
    refused = await resolution(stack, first["id"])
    assert refused.outcome == "refused"
    assert [(sent.channel_id, sent.content) for sent in fake.sent] == [(CHANNEL_ID, REFUSED_MEMBER)]
    again = fake.message_create(f"{MENTION} /status")
    await fake.dispatch("MESSAGE_CREATE", again)
    assert (await resolution(stack, again["id"])).outcome == "refused"

    command = slash_command("fix it", member={"user": {"id": PERSON["id"], "username": "ada"}, "roles": [],
                                              "permissions": "0"})
    fake.expect_interaction(command["token"])
    # A slash command is answered at once, to its user alone: every time, as it bothers nobody else.
    for _ in range(2):
        answer = await post(stack, command)
        assert answer.json() == {"type": 4, "data": {"content": REFUSED_MEMBER, "flags": 64}}
    assert (await resolution(stack, f"interaction:{command['id']}")).outcome == "refused"
    assert len(fake.sent) == 1 and fake.threads == [] and fake.followups == [], "once per conversation and hour"
    assert await stack.db.fetchval("SELECT count(*) FROM discord_interactions") == 0
    await nothing_changed(stack, repo)
    listed = await recorded_as_refused(stack, "discord", f"message:discord:{first['id']}")
    assert listed["sender"] == f"user {PERSON['id']} in server {GUILD_ID}"


async def test_a_member_with_the_role_works_as_before_and_a_direct_message_needs_a_user_rule(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    developer = fake.message_create(f"{MENTION} fix the login bug", roles=(ROLE_ID,))
    await fake.dispatch("MESSAGE_CREATE", developer)
    assert (await resolution(stack, developer["id"])).outcome == "created"
    assert [thread.message_id for thread in fake.threads] == [developer["id"]]

    dm = snowflake()
    fake.add_dm(dm)
    direct = fake.message_create("fix it", channel_id=dm, mentions=())
    await fake.dispatch("MESSAGE_CREATE", direct)
    assert (await resolution(stack, direct["id"])).outcome == "refused"
    assert fake.sent[-1].channel_id == dm and "`DISCORD_ALLOWED_USERS`" in fake.sent[-1].content
