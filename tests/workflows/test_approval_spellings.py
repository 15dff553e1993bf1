"""An approval rule holds whatever the shell spelling (docs/approvals.md, issue 46), with the real Claude
Code against the fake Anthropic API, real git, PostgreSQL, Temporal and bubblewrap: every call Claude Code
asks about because a rule matched ends with its person asked, never run unasked, however the relay reads
the command; "allow for this conversation" allows that call, not another riding along with it; and a
`Write(path)` rule, the repository's or the operator's, is one Claude Code applies itself."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.approvals import press, request_of, runs_when_ended
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import Step, run, text, write
from tests.gitrepos import git

RULES = "ask: Bash(git push:*), Bash(rm -rf:*), Bash(touch:*); deny: Write(secrets/**)"
REPOSITORY_RULES = '[approvals]\nask = ["Write(reports/**)"]\n'
SPELLINGS = ["git  push", "true & git push", "command git push", "(git push)", "{ git push; }", "X=1 git push",
             "env X=1 git push", "exec git push", "time git push", "\\git push", "'git' push", "echo $(git push)",
             "command touch commanded.txt", "true & touch backgrounded.txt"]
REPORT, SECRET = "reports/q3.md", "secrets/key.txt"
CALLS: list[Step] = [*map(run, SPELLINGS), write(REPORT, "figures\n"), write(SECRET, "k\n")]
NAMES = [*SPELLINGS, f"Write {REPORT}", f"Write {SECRET}"]
PIGGYBACK = "git push origin main; rm -rf /tmp/q; echo RAN"


class ByConversation(FakeAnthropicApi):
    """Makes the call CALLS[n] for a message that says `call n`, so that conversations may run at once; any
    other request (a tool's result, a resumed session) takes the script's next step."""

    def next_step(self, body: dict[str, Any]) -> Step:
        said = json.dumps([message for message in body.get("messages", []) if message.get("role") == "user"][-1:])
        found = re.search(r"call (\d+)\b", said)
        if found and "tool_result" not in said:
            return CALLS[int(found.group(1))]
        return super().next_step(body)


@pytest.fixture
async def claude(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeAnthropicApi]:
    async with ByConversation() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        stack.settings.agent_approvals_line = RULES
        yield api


async def was_asked(stack: Stack, number: int) -> tuple[bool, Path]:
    """Says `call <number>` in a conversation of its own: whether its run ended waiting for a person, with its
    request sent; and its worktree."""
    talk = f"spelling-{number}-{uuid.uuid4().hex[:6]}"
    worktree = Path((await stack.say(talk, f"call {number}"))["result"]["workingPath"])
    (ended,) = await runs_when_ended(stack, talk, 1, seconds=180)
    requests = [item for item in (await stack.api.get("/api/approvals")).json()
                if item["conversation"] == f"test:{talk}"]
    return ended["status"] == "waiting" and len(requests) == 1, worktree


async def test_every_spelling_is_asked_and_a_write_rule_holds(stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    (repo / ".isolator.toml").write_text(REPOSITORY_RULES)
    git("add", ".isolator.toml", cwd=repo)
    git("commit", "-q", "-m", "ask before writing a report", cwd=repo)
    await stack.register(repo)
    outcomes = dict(zip(NAMES, await asyncio.gather(*(was_asked(stack, number) for number in range(len(CALLS))))))

    unasked = [name for name, (asked, _) in outcomes.items() if not asked and name != f"Write {SECRET}"]
    assert unasked == [], f"ran without asking anyone: {unasked}"
    for name, made in (("command touch commanded.txt", "commanded.txt"),
                       ("true & touch backgrounded.txt", "backgrounded.txt"), (f"Write {REPORT}", REPORT)):
        assert not (outcomes[name][1] / made).exists(), f"{name} ran before anyone answered"
    asked, worktree = outcomes[f"Write {SECRET}"]
    assert not asked and not (worktree / SECRET).exists(), "Claude Code refuses it itself, asking nobody"


async def test_allow_for_this_conversation_lets_nothing_ride_along(stack: Stack, repo: Path,
                                                                   claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = f"piggyback-{uuid.uuid4().hex[:6]}"
    claude.then(run("git push origin main"), run("git push origin main"), text("Pushed."))
    await stack.say(talk, "push it")
    first = await request_of(stack, talk)
    assert (await press(stack, first["code"], "conversation"))[0] == 200
    assert [item["status"] for item in await runs_when_ended(stack, talk, 2)] == ["waiting", "done"]

    claude.then(run("git push origin main"), text("Pushed again, unasked."))
    await stack.say(talk, "push it again")
    assert (await runs_when_ended(stack, talk, 3))[-1]["status"] == "done", "the call allowed is not asked again"

    claude.then(run(PIGGYBACK), text("never said"))
    await stack.say(talk, "push, and clean up")
    assert (await runs_when_ended(stack, talk, 4))[-1]["status"] == "waiting", "rm -rf rode along on the push"
    assert PIGGYBACK in (await request_of(stack, talk, other_than=first["code"]))["text"]
