"""Discord end to end: the real discord.py listening to a fake Gateway, interactions signed with
Ed25519 into the real app, workflows on real Temporal, git and PostgreSQL, and replies through
discord.py to the fake REST API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from nacl.signing import SigningKey

from isolator.contracts.message import message_workflow_id
from tests.archives import archive_git
from tests.conftest import Stack
from tests.fakes.discord_api import BOT_USER, CHANNEL_ID, OTHER_BOT, FakeDiscord
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.discord import (
    eventually,
    post,
    resolution,
    signed,
    slash_command,
    started,
)
from tests.platforms.github_issues import environment, status_of
from tests.security.fuzzing import settled_workflows
from workflows.naming import thread_branch

MENTION = f"<@{BOT_USER['id']}>"


async def mention_in_channel(stack: Stack, fake: FakeDiscord, text: str) -> dict:
    """A person mentions the bot in the channel; returns the message, once its workflow has finished."""
    message = fake.message_create(f"{MENTION} {text}")
    await fake.dispatch("MESSAGE_CREATE", message)
    assert await eventually(lambda: started(stack, message["id"])), "the mention started no workflow"
    return message


async def test_a_mention_starts_a_thread_with_a_worktree_and_the_thread_goes_on_with_it(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    first = await mention_in_channel(stack, fake, "fix the login bug")
    thread_id = first["id"]  # a thread started on a message has the message's id
    created = await resolution(stack, thread_id)
    branch = thread_branch(f"discord:{thread_id}")
    expected_path = stack.settings.worktree_base.resolve() / "project" / branch
    assert (created.outcome, created.branch, created.working_path) == ("created", branch, str(expected_path))
    assert worktree_paths(repo) == [str(expected_path)]
    assert [(thread.parent_id, thread.message_id, thread.name) for thread in fake.threads] == [
        (CHANNEL_ID, thread_id, "fix the login bug")
    ]
    # No agent is configured: the first message is told so at once, in the thread, after the worktree's line.
    assert [(sent.channel_id, sent.content) for sent in fake.sent] == [
        (thread_id, text) for text in first_replies(branch, repo)]
    bot_reply = fake.sent[0]

    # In the thread: a reply to the bot, then a mention, go on in the same worktree, silently (that no agent
    # is configured was said once, on the first message).
    reply = fake.message_create("and the tests too", channel_id=thread_id, mentions=(),
                                referenced_message=fake.message_of(bot_reply))
    await fake.dispatch("MESSAGE_CREATE", reply)
    mention = fake.message_create(f"{MENTION} and the docs", channel_id=thread_id)
    await fake.dispatch("MESSAGE_CREATE", mention)
    for message in (reply, mention):
        reused = await resolution(stack, message["id"])
        assert (reused.outcome, reused.branch, reused.replies) == ("reused", branch, [])
    assert [sent.content for sent in fake.sent] == first_replies(branch, repo)
    assert len(fake.threads) == 1 and worktree_paths(repo) == [str(expected_path)]

    # Not for the bot: chatter in the thread, a channel message without a mention, bots (itself too).
    ignored = [
        fake.message_create("just talking among us", channel_id=thread_id, mentions=()),
        fake.message_create("no mention here", mentions=()),
        fake.message_create(f"{MENTION} I am a bot", author=OTHER_BOT),
        fake.message_create(f"{MENTION} my own words", author=BOT_USER),
    ]
    for message in ignored:
        await fake.dispatch("MESSAGE_CREATE", message)
    last = fake.message_create(f"{MENTION} /status", channel_id=thread_id)
    await fake.dispatch("MESSAGE_CREATE", last)
    assert (await resolution(stack, last["id"])).outcome == "command"  # events are handled in order…
    for message in ignored:  # …so the ones before it have been seen, and started nothing
        assert not await started(stack, message["id"]), message["content"]
    assert "project" in fake.sent[-1].content and fake.sent[-1].channel_id == thread_id


async def test_in_a_dm_every_message_is_for_the_bot(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    fake.add_dm("1300000000000000099")
    first = fake.message_create("fix the login bug", channel_id="1300000000000000099", mentions=())
    await fake.dispatch("MESSAGE_CREATE", first)
    created = await resolution(stack, first["id"])
    branch = thread_branch("discord:1300000000000000099")
    assert (created.outcome, created.branch) == ("created", branch)
    assert [(sent.channel_id, sent.content) for sent in fake.sent] == [
        ("1300000000000000099", text) for text in first_replies(branch, repo)]
    assert fake.threads == [], "a DM is the conversation itself"


async def test_a_signed_slash_command_is_deferred_then_followed_up_and_a_bad_signature_starts_nothing(
    stack: Stack, fake: FakeDiscord, repo: Path
) -> None:
    await stack.register(repo)
    ping = await post(stack, {"type": 1, "id": "1", "application_id": "2", "token": "t"})
    assert (ping.status_code, ping.json()) == (200, {"type": 1})

    command = slash_command("fix the flaky test")
    fake.expect_interaction(command["token"])
    response = await post(stack, command)
    assert (response.status_code, response.json()) == (200, {"type": 5}), response.text
    created = await resolution(stack, f"interaction:{command['id']}")
    branch = thread_branch(f"discord:{CHANNEL_ID}")
    assert (created.outcome, created.branch) == ("created", branch)
    assert [(f.token, f.content) for f in fake.followups] == [
        (command["token"], text) for text in first_replies(branch, repo)], "no agent: said in a second follow-up"
    assert fake.sent == [], "a slash command is answered by its follow-up, not by a channel message"

    status = slash_command("status")
    fake.expect_interaction(status["token"])
    assert (await post(stack, status)).json() == {"type": 5}
    assert (await resolution(stack, f"interaction:{status['id']}")).outcome == "command"
    assert fake.followups[-1].token == status["token"] and branch in fake.followups[-1].content

    # Refused, 401, nothing started: another key's signature, a signature of another body, none at all.
    for headers in (signed(b"{}", SigningKey.generate()), signed(b"{}"), {"content-type": "application/json"}):
        refused = slash_command("fix it")
        answer = await post(stack, refused, headers=headers)
        assert answer.status_code == 401, answer.text
        assert not await started(stack, f"interaction:{refused['id']}")
    tampered = slash_command("status")
    body = json.dumps(tampered).encode()
    headers = signed(body)
    answer = await post(stack, body.replace(b"status", b"worktree remove --force x"), headers=headers)
    assert answer.status_code == 401 and not await started(stack, f"interaction:{tampered['id']}")

    # Another command, a button: answered for the user's eyes only, nothing started.
    other = slash_command("x", data={"id": "1", "name": "other", "type": 1})
    answer = await post(stack, other)
    assert answer.json()["type"] == 4 and answer.json()["data"]["flags"] == 64
    assert not await started(stack, f"interaction:{other['id']}")


async def test_replayed_events_and_interactions_start_nothing_new(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    first = await mention_in_channel(stack, fake, "fix the login bug")
    assert (await resolution(stack, first["id"])).outcome == "created"
    command = slash_command("status", channel_id=first["id"])
    fake.expect_interaction(command["token"])
    assert (await post(stack, command)).json() == {"type": 5}
    assert (await resolution(stack, f"interaction:{command['id']}")).outcome == "command"
    replies_before, follow_ups_before = list(fake.sent), list(fake.followups)

    # The Gateway replays everything after a reconnect; Discord sends the interaction again.
    await fake.replay_everything()
    again = await post(stack, command)
    assert again.json() == {"type": 5}
    last = fake.message_create(f"{MENTION} /status", channel_id=first["id"])
    await fake.dispatch("MESSAGE_CREATE", last)
    assert (await resolution(stack, last["id"])).outcome == "command"

    keys = [first["id"], f"interaction:{command['id']}", last["id"]]
    expected = {message_workflow_id("discord", key) for key in keys}
    assert await settled_workflows(stack, expected) == expected
    assert len(fake.threads) == 1, "the replayed mention made no second thread"
    assert fake.sent[: len(replies_before)] == replies_before and len(fake.sent) == len(replies_before) + 1
    assert fake.followups == follow_ups_before
    assert len(worktree_paths(repo)) == 1


async def test_deleting_or_archiving_a_thread_removes_its_worktree_into_its_archive(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    clean, dirty = [await mention_in_channel(stack, fake, text) for text in ("task one", "task two")]
    environments = {}
    for message in (clean, dirty):
        environments[message["id"]] = (await resolution(stack, message["id"])).environment_id
    dirty_path = Path((await resolution(stack, dirty["id"])).working_path or "")
    (dirty_path / "notes.txt").write_text("half-done work\n")

    await fake.dispatch("THREAD_DELETE", fake.thread_delete(clean["id"]))
    report = await environment(stack, environments[clean["id"]]).result()
    assert report.outcome == "removed"
    assert await status_of(stack, environments[clean["id"]]) == "destroyed"
    assert worktree_paths(repo) == [str(dirty_path)]

    archived = fake.thread_update(dirty["id"], archived=True)
    await fake.dispatch("THREAD_UPDATE", archived)
    archive_key = f"archived:{dirty['id']}:{archived['thread_metadata']['archive_timestamp']}"
    assert (await resolution(stack, archive_key)).outcome == "closed"
    report = await environment(stack, environments[dirty["id"]]).result()
    assert report.outcome == "removed" and not dirty_path.exists()
    assert archive_git(repo, "show", f"{report.archive_refs[0]}:notes.txt") == "half-done work\n"

    # A thread that is no conversation of the bot's closes nothing; its archiving starts no workflow.
    await fake.dispatch("THREAD_UPDATE", fake.thread_update("1999999999999999999", archived=True))
    last = fake.message_create(f"{MENTION} /help")
    await fake.dispatch("MESSAGE_CREATE", last)
    await resolution(stack, last["id"])
    keys = [clean["id"], dirty["id"], f"deleted:{clean['id']}", archive_key, last["id"]]
    expected = {message_workflow_id("discord", key) for key in keys}
    assert await settled_workflows(stack, expected) == expected


async def test_a_bare_mention_starts_nothing_and_says_what_to_write(
    stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    await stack.register(repo)
    fake.add_dm("1300000000000000098")
    blank = fake.message_create("   ", channel_id="1300000000000000098", mentions=())
    await fake.dispatch("MESSAGE_CREATE", blank)
    for _ in range(600):
        if fake.sent:
            break
        await asyncio.sleep(0.05)

    assert [sent.content for sent in fake.sent] == [
        "Write what the agent should do after the mention, or a command such as `/help`."]
    assert not await started(stack, blank["id"])
