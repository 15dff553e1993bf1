"""Asking the human on each platform, end to end: a person's message in a Slack thread, a Telegram chat,
a Discord thread or a GitHub issue starts the real Claude Code (against the fake Anthropic API), a rule
makes its call wait, the request comes into the conversation with the platform's own buttons (the real
SDKs against the fake platform APIs; on GitHub, the comments that answer it), and a press (the signed
webhook the platform would send) resumes the session: allowed, the command runs and the run ends with
its answer; denied, it never runs and the agent is told. Another person's press is refused to them alone
and decides nothing. Real git, PostgreSQL, Temporal and bubblewrap. The test adapter's: test_approvals.py."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.approvals import approval_code, approval_state, conversation_runs_when_ended, until, use_approvals
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.discord_api import APPLICATION_ID as DISCORD_APPLICATION
from tests.fakes.discord_api import BOT_TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import BOT_USER as DISCORD_BOT
from tests.fakes.discord_api import GUILD_ID, PERSON, ROLE_ID, FakeDiscord, FollowUp, SentMessage
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import run, text
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram
from tests.platforms import discord as discord_platform
from tests.platforms import github as github_platform
from tests.platforms import slack as slack_platform
from tests.platforms import telegram as telegram_platform
from tests.results import run_messages
from workers.discord_listener import running_discord_listener

TOOL_LABELS = ["Allow once", "Allow for this conversation", "Deny"]
SLACK_OTHER = "U0OTHER001"  # in the channel, but did not start the run
TELEGRAM_OTHER = {"id": 444555666, "username": "bob"}  # may talk to the bot, but did not start the run
DISCORD_OTHER = "1100000000000000700"  # a member with the `developers` role: allowed, but did not start the run
EPHEMERAL = 64  # Discord's flag of a message only its reader sees


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, slack: FakeSlack, telegram: FakeTelegram, discord: FakeDiscord,
             github: FakeGitHub) -> Settings:
    """Every platform set up at once, each against its fake API."""
    return settings.model_copy(update={
        "slack_signing_secret": SecretStr(slack_platform.SIGNING_SECRET),
        "slack_bot_token": SecretStr(SLACK_TOKEN),
        "slack_api_url": slack.api_url,
        "telegram_webhook_secret": SecretStr(telegram_platform.WEBHOOK_SECRET),
        "telegram_bot_token": SecretStr(TELEGRAM_TOKEN),
        "telegram_api_url": telegram.api_url,
        "telegram_allowed_users": frozenset({str(telegram_platform.USER["id"]), str(TELEGRAM_OTHER["id"])}),
        "discord_bot_token": SecretStr(DISCORD_TOKEN),
        "discord_public_key": discord_platform.SIGNING_KEY.verify_key.encode().hex(),
        "discord_application_id": DISCORD_APPLICATION,
        "discord_api_url": discord.api_url,
        "discord_allowed_guilds": frozenset({GUILD_ID}),
        "discord_allowed_users": frozenset({PERSON["id"]}),
        "discord_allowed_roles": frozenset({ROLE_ID}),
        "github_webhook_secret": SecretStr(github_platform.SECRET),
        "github_token": SecretStr(GITHUB_TOKEN),
        "github_api_url": github.api_url,
    })


@pytest.fixture
async def claude(stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeAnthropicApi]:
    async with FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        use_approvals(stack)
        await stack.register(repo, url=github_platform.URL)  # its GitHub project too
        yield api


def allow_once_script(claude: FakeAnthropicApi) -> None:
    """The call asked for, then the same call again once allowed (the resumed session), then the answer."""
    claude.then(run("git push origin HEAD"), run("git push origin HEAD"), text("Pushed."))


def ended_with_push(said: str) -> bool:
    """The run's answer in its final form: it streams first, then is replaced by what it did and its end."""
    return "Pushed." in said and "— Done" in said


def deny_script(claude: FakeAnthropicApi) -> None:
    claude.then(run("touch denied.txt"), text("Understood, I left it."))


# --- Slack ---------------------------------------------------------------------------------------


async def slack_mention(stack: Stack, said: str) -> tuple[str, Path]:
    """A person's mention of the bot starts a thread; its conversation id and worktree."""
    ts = slack_platform.new_ts()
    await slack_platform.send(stack, slack_platform.app_mention(ts, f"<@{BOT_USER_ID}> {said}"))
    resolution = await slack_platform.resolution(stack, ts)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return f"{slack_platform.CHANNEL}:{ts}", Path(resolution.working_path)


async def slack_request(slack: FakeSlack) -> slack_platform.Post:
    await until(lambda: any(slack_platform.buttons(slack.blocks(post.ts)) for post in slack.posts),
                "a Slack message with buttons")
    return slack_platform.request_message(slack)


def slack_shown(slack: FakeSlack, ts: str) -> tuple[str, list[dict]]:
    """What message `ts` reads now: its text and buttons."""
    texts = [post.text for post in slack.posts if post.ts == ts] + [edit.text for edit in slack.edits if edit.ts == ts]
    return texts[-1], slack_platform.buttons(slack.blocks(ts))


def slack_texts(slack: FakeSlack) -> list[str]:
    return [slack_shown(slack, post.ts)[0] for post in slack.posts]


async def test_slack_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, slack: FakeSlack, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    conversation, _ = await slack_mention(stack, "push it please")
    asked = await slack_request(slack)
    assert asked.thread_ts == conversation.split(":")[1], "the request comes into the thread"
    assert "git push origin HEAD" in asked.text
    assert [button["text"]["text"] for button in slack_platform.buttons(asked.blocks or [])] == TOOL_LABELS
    code = await approval_code(stack, "slack", conversation)

    await slack_platform.press(stack.api, asked, "Allow once", user=SLACK_OTHER)
    await until(lambda: any(e.user == SLACK_OTHER for e in slack.ephemerals), "the refusal, to the presser alone")
    (refusal,) = slack.ephemerals
    assert refusal.thread_ts == asked.thread_ts and "Only the person who started this run" in refusal.text
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"
    assert slack_shown(slack, asked.ts)[1], "the buttons stay for the person who may answer"

    await slack_platform.press(stack.api, asked, "Allow once")
    runs = await conversation_runs_when_ended(stack, f"slack:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert f"<@{slack_platform.USER}> approved this call" in claude.conversation_texts(len(claude.calls) - 2)
    await until(lambda: any(ended_with_push(said) for said in slack_texts(slack)), "the answer in the thread")
    answer = next(said for said in slack_texts(slack) if ended_with_push(said))
    assert "ran `git push origin HEAD` (exit" in answer, answer
    assert any("ran `git push origin HEAD` (exit" in said for said in await run_messages(stack.db, runs[1]["id"]))
    shown, buttons = slack_shown(slack, asked.ts)
    assert f"Allowed once by <@{slack_platform.USER}>" in shown and buttons == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_slack_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, slack: FakeSlack, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    conversation, worktree = await slack_mention(stack, "touch denied.txt")
    asked = await slack_request(slack)
    assert "touch denied.txt" in asked.text

    await slack_platform.press(stack.api, asked, "Deny")
    runs = await conversation_runs_when_ended(stack, f"slack:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert f"<@{slack_platform.USER}> denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in slack_texts(slack)), "the agent's answer")
    shown, buttons = slack_shown(slack, asked.ts)
    assert f"Denied by <@{slack_platform.USER}>" in shown and buttons == []
    assert slack.ephemerals == []


# --- Telegram ------------------------------------------------------------------------------------


async def telegram_message(stack: Stack, said: str) -> tuple[str, Path]:
    """A person's message in their private chat with the bot; its conversation id and worktree."""
    update_id = await telegram_platform.send(stack, message=telegram_platform.message(said))
    resolution = await telegram_platform.resolution(stack, update_id)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return f"{telegram_platform.PRIVATE['id']}:0", Path(resolution.working_path)


async def telegram_request(telegram: FakeTelegram) -> telegram_platform.Sent:
    await until(lambda: any(sent.buttons for sent in telegram.messages.values()), "a Telegram message with buttons")
    return telegram_platform.request_message(telegram)


def telegram_texts(telegram: FakeTelegram) -> list[str]:
    return [sent.text for _, sent in sorted(telegram.messages.items())]


async def test_telegram_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, telegram: FakeTelegram, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    conversation, _ = await telegram_message(stack, "push it please")
    asked = await telegram_request(telegram)
    assert asked.chat_id == telegram_platform.PRIVATE["id"] and "git push origin HEAD" in asked.text
    assert [button["text"] for button in asked.buttons] == TOOL_LABELS
    code = await approval_code(stack, "telegram", conversation)

    response = await telegram_platform.press(stack.api, asked, "Allow once", TELEGRAM_OTHER["id"],
                                             TELEGRAM_OTHER["username"])
    assert response.status_code == 200, response.text
    await until(lambda: bool(telegram.callback_answers), "the refusal, to the presser alone")
    (refusal,) = telegram.callback_answers
    assert refusal.show_alert and "Only the person who started this run" in (refusal.text or "")
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"

    response = await telegram_platform.press(stack.api, asked, "Allow once")
    assert response.status_code == 200, response.text
    runs = await conversation_runs_when_ended(stack, f"telegram:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert "@ada approved this call" in claude.conversation_texts(len(claude.calls) - 2)
    await until(lambda: any(ended_with_push(said) for said in telegram_texts(telegram)), "the answer in the chat")
    answer = next(said for said in telegram_texts(telegram) if ended_with_push(said))
    assert "ran `git push origin HEAD` (exit" in answer, answer
    edited = telegram.messages[asked.message_id]
    assert "Allowed once by @ada" in edited.text and edited.buttons == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_telegram_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, telegram: FakeTelegram, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    conversation, worktree = await telegram_message(stack, "touch denied.txt")
    asked = await telegram_request(telegram)

    response = await telegram_platform.press(stack.api, asked, "Deny")
    assert response.status_code == 200, response.text
    runs = await conversation_runs_when_ended(stack, f"telegram:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert "@ada denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in telegram_texts(telegram)), "the answer")
    edited = telegram.messages[asked.message_id]
    assert "Denied by @ada" in edited.text and edited.buttons == []


# --- Discord -------------------------------------------------------------------------------------


@pytest.fixture
async def listener(stack: Stack, discord: FakeDiscord) -> AsyncIterator[None]:
    """The Gateway listener of `isolator discord`, connected to the fake and ready."""
    async with running_discord_listener(stack.settings, stack.temporal, stack.db):
        await discord.wait_ready()
        yield


async def discord_mention(stack: Stack, discord: FakeDiscord, said: str) -> tuple[str, Path]:
    """A person's mention of the bot in the channel starts a thread; the thread's id (the conversation's)
    and its worktree."""
    message = discord.message_create(f"<@{DISCORD_BOT['id']}> {said}")
    await discord.dispatch("MESSAGE_CREATE", message)
    resolution = await discord_platform.resolution(stack, message["id"])
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return message["id"], Path(resolution.working_path)


async def discord_request(discord: FakeDiscord) -> SentMessage | FollowUp:
    await until(lambda: discord_platform.request_message(discord) is not None, "a Discord message with buttons")
    asked = discord_platform.request_message(discord)
    assert asked is not None
    return asked


def discord_shown(discord: FakeDiscord, message_id: str) -> SentMessage:
    """Message `message_id` as it reads now (its last edit)."""
    return [sent for sent in discord.sent + discord.edits if sent.message_id == message_id][-1]


def discord_texts(discord: FakeDiscord) -> list[str]:
    return [discord_shown(discord, sent.message_id).content for sent in discord.sent]


async def test_discord_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, discord: FakeDiscord, listener: None, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    thread, _ = await discord_mention(stack, discord, "push it please")
    asked = await discord_request(discord)
    assert isinstance(asked, SentMessage) and asked.channel_id == thread, "the request comes into the thread"
    assert "git push origin HEAD" in asked.content
    assert [button["label"] for button in discord_platform.buttons_of(asked)] == TOOL_LABELS
    code = await approval_code(stack, "discord", thread)

    refused = await discord_platform.press(stack.api, asked, "Allow once", DISCORD_OTHER, roles=(ROLE_ID,))
    assert refused.status_code == 200, refused.text
    body = refused.json()
    assert (body["type"], body["data"]["flags"]) == (4, EPHEMERAL), "told to the presser alone"
    assert "Only the person who started this run" in body["data"]["content"]
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"

    taken = await discord_platform.press(stack.api, asked, "Allow once")
    assert taken.status_code == 200 and taken.json()["type"] == 6, taken.text  # the workflow edits the request
    runs = await conversation_runs_when_ended(stack, f"discord:{thread}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert f"<@{PERSON['id']}> approved this call" in claude.conversation_texts(len(claude.calls) - 2)
    await until(lambda: any(ended_with_push(said) for said in discord_texts(discord)), "the answer in the thread")
    answer = next(said for said in discord_texts(discord) if ended_with_push(said))
    assert "ran `git push origin HEAD` (exit" in answer, answer
    edited = discord_shown(discord, asked.message_id)
    assert f"Allowed once by <@{PERSON['id']}>" in edited.content and edited.components == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_discord_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, discord: FakeDiscord, listener: None, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    thread, worktree = await discord_mention(stack, discord, "touch denied.txt")
    asked = await discord_request(discord)

    taken = await discord_platform.press(stack.api, asked, "Deny")
    assert taken.status_code == 200 and taken.json()["type"] == 6, taken.text
    runs = await conversation_runs_when_ended(stack, f"discord:{thread}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert f"<@{PERSON['id']}> denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in discord_texts(discord)), "the answer")
    edited = discord_shown(discord, asked.message_id)
    assert f"Denied by <@{PERSON['id']}>" in edited.content and edited.components == []


# --- GitHub: no buttons, the request lists the comments that answer it --------------------------


async def github_issue(stack: Stack, github: FakeGitHub, number: int, said: str) -> Path:
    """An issue opened by octocat, mentioning the bot, in the registered repository's GitHub project; its worktree."""
    github.add_issue(github_platform.REPO, number)
    response, delivery = await github_platform.deliver(
        stack, "issues", github_platform.issues_event("opened", number, f"@isolator {said}"))
    assert response.status_code == 202, response.text
    resolution = await github_platform.resolution(stack, delivery)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return Path(resolution.working_path)


async def github_request(github: FakeGitHub) -> github_platform.RequestComment:
    def listed() -> bool:
        return any("Answer with a comment:" in posted.body for posted in github.comments)

    await until(listed, "a GitHub comment listing the answers")
    return github_platform.request_comment(github)


def github_texts(github: FakeGitHub) -> list[str]:
    return [posted.body for posted in github.comments] + [body for _, body in github.edits]


def github_answered(github: FakeGitHub, code: str) -> str:
    """The request's comment as its last edit left it."""
    return [body for _, body in github.edits if f"`{code}`" in body][-1]


async def test_github_approve_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, github: FakeGitHub, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    await github_issue(stack, github, 7, "push it please")
    asked = await github_request(github)
    assert asked.number == 7 and "git push origin HEAD" in asked.body
    assert list(asked.commands) == TOOL_LABELS

    refused = await github_platform.comment(stack, github, 7, asked.commands["Allow once"], login="mallory")
    assert refused.status_code == 200, refused.text
    refusal = "@mallory: Only the person who started this run, or an admin, may answer it."
    await until(lambda: any(posted.body == refusal for posted in github.comments), "the refusal, to mallory")
    assert await approval_state(stack, asked.code) == "pending", "another person's comment decides nothing"

    taken = await github_platform.comment(stack, github, 7, asked.commands["Allow once"])
    assert taken.status_code == 200, taken.text
    runs = await conversation_runs_when_ended(stack, f"github:{github_platform.REPO}#7", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert "@octocat approved this call" in claude.conversation_texts(len(claude.calls) - 2)
    await until(lambda: any(ended_with_push(said) for said in github_texts(github)), "the answer on the issue")
    answer = [said for said in github_texts(github) if ended_with_push(said)][-1]
    assert "ran `git push origin HEAD` (exit" in answer, answer
    answered = github_answered(github, asked.code)
    assert answered.endswith("✅ Allowed once by @octocat") and "/approve" not in answered, answered
    assert [content for _, content in github.reactions] == ["+1"], "the answering comment is acknowledged"
    assert await approval_state(stack, asked.code) == "allowed"


async def test_github_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, github: FakeGitHub, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    worktree = await github_issue(stack, github, 8, "touch denied.txt")
    asked = await github_request(github)

    taken = await github_platform.comment(stack, github, 8, f"/deny {asked.code} not on main")
    assert taken.status_code == 200, taken.text
    runs = await conversation_runs_when_ended(stack, f"github:{github_platform.REPO}#8", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    told = claude.conversation_texts(len(claude.calls) - 1)
    assert "@octocat denied this call" in told and "not on main" in told
    await until(lambda: any("Understood, I left it." in said for said in github_texts(github)), "the answer")
    answered = github_answered(github, asked.code)
    assert "🚫 Denied by @octocat" in answered and "not on main" in answered and "/deny" not in answered
