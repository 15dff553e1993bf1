"""A message behind a request that waits for a person (issue 47, item 7): a run paused at its budget holds
the worktree's queue (docs/approvals.md), and the next messages are told what they wait for: the request,
its code, and that answering it lets them run.

End to end through the test adapter: the real Claude Code against the fake Anthropic API, real git,
PostgreSQL, Temporal and bubblewrap."""

from __future__ import annotations

from pathlib import Path

from tests.approvals import claude, press, request_of, runs_when_ended, waiting_for_answer  # noqa: F401 - claude: the fixture
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text


async def test_messages_behind_a_paused_budget_are_told_its_code_and_that_answering_it_lets_them_run(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    stack.settings.agent_max_cost_usd = 0.001  # the fake's first answer costs more
    await stack.register(repo)
    talk = "behind-a-budget"
    claude.then(run("echo one"), text("Went on after the budget."))
    first = (await stack.say(talk, "spend"))["result"]
    asked = await request_of(stack, talk)
    await waiting_for_answer(stack, first["environmentId"])

    behind = (await stack.say(talk, "then add a README"))["result"]
    assert behind["replies"] == [
        f"Queued: the run ahead waits for an answer to the run's budget ($0.001) (code `{asked['code']}`). "
        "Answering it lets this message run."], behind
    later = (await stack.say(talk, "and a licence"))["result"]
    assert later["replies"] == [
        f"Queued: the run ahead waits for an answer to the run's budget ($0.001) (code `{asked['code']}`). "
        "Answering it lets this message run, after 1 more."], later

    stack.settings.agent_max_cost_usd = None  # the runs after the answer go to their end
    assert (await press(stack, asked["code"], "continue"))[0] == 200
    ended = {each["message"]: each["status"] for each in await runs_when_ended(stack, talk, 4)}
    assert (ended["then add a README"], ended["and a licence"]) == ("done", "done"), ended
