"""A run that pauses for a person's answer says so, every time (issue 47, item 2), with the real Claude Code
against the fake Anthropic API: its message ends with the pause, never with Claude Code's words for the
interrupt that ends its turn, even on a platform slow to acknowledge a post; and its page shows the call as
waiting, the run as waiting (no exit code), and no diagnostics of the CLI as its answer."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from activities.chat.replies import ReplyActivities
from isolator.contracts.message import ReplyInput
from tests.approvals import claude, request_of, use_approvals, waiting_for_answer  # noqa: F401 - claude: the fixture
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run

INTERRUPT_WORDS = "doesn't want to proceed"  # Claude Code's words for the interrupt that ends the turn


@pytest.fixture
def slow_acknowledgements(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform that takes a run's first post at once but acknowledges it late (a busy chat API, a
    busy database): the run's end comes while that post is still in flight."""
    delivers = ReplyActivities.deliver_once

    async def acknowledged_late(self: ReplyActivities, reply: ReplyInput) -> None:
        await delivers(self, reply)
        if reply.idempotency_key.startswith("agent-run:") and reply.updates is None:
            await asyncio.sleep(3)

    monkeypatch.setattr(ReplyActivities, "deliver_once", acknowledged_late)


async def test_a_paused_run_says_it_paused_and_never_shows_the_interrupt_as_its_answer(
        stack: Stack, repo: Path, claude: FakeAnthropicApi, slow_acknowledgements: None) -> None:
    await stack.register(repo)
    talk = f"pause-{uuid.uuid4().hex[:6]}"
    # A first step shown at once (a refused call, which adds nothing to the answer), so that the message's first
    # post is in flight when the turn ends.
    use_approvals(stack, "ask: Bash(touch:*); deny: Bash(rm:*)")
    claude.then(run("rm -rf build"), run("touch third.txt", delay=1.0))
    first = (await stack.say(talk, "touch third.txt please", user="alice"))["result"]
    asked = await request_of(stack, talk)
    await waiting_for_answer(stack, first["environmentId"])
    run_id = first["agentRunId"]

    message = await stack.db.fetchval("SELECT body FROM outbound_messages WHERE idempotency_key = $1",
                                      f"agent-run:{run_id}:0")
    assert "— Paused after" in message and "a call needs a person's approval (below)" in message, message
    assert INTERRUPT_WORDS not in message, message
    assert not any(INTERRUPT_WORDS in reply for reply in await stack.replies(talk))
    row = await stack.db.fetchrow("SELECT status, exit_code, output FROM agent_runs WHERE id = $1", uuid.UUID(run_id))
    assert (row["status"], row["exit_code"]) == ("waiting", None), "paused: its exit is the interrupt's, no failure"
    assert INTERRUPT_WORDS not in row["output"] and "`touch third.txt` waits for a person's answer" in row["output"]

    page = (await stack.api.get(f"/runs/{run_id}")).text
    assert 'data-fact="status_text">waiting<' in page, "waiting, without the agent's exit code"
    entries = page.split('<div id="entries">', 1)[1].split('<pre id="output"', 1)[0]
    held = entries.split("<code>touch third.txt</code>", 1)[1].split("</details>", 1)[0]
    assert "<summary>Held for a person (" in held and "Failed" not in held, "the held call waits; it did not fail"
    assert "ede_diagnostic" not in entries and INTERRUPT_WORDS not in entries, entries
    assert "entry answer" not in entries and "Paused: a person&#39;s answer is asked for" in entries, entries
    assert asked["code"] in page
