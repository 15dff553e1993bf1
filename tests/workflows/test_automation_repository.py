"""A repository's `[[automations]]` read on request (POST /api/automations/reconcile, for a repository
whose pushes the service does not hear of), within the places the operator allows its reports to go,
and a firing that finds nothing to do: one line, or none with `quiet = true`.

Real git, PostgreSQL and Temporal; a small real agent (tests/agents/changer.py, which changes nothing
when asked "nothing").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.gitrepos import git
from tests.results import eventually

AUTOMATIONS = '''
[[automations]]
name = "nightly"
schedule = "0 3 * * *"
prompt = "nothing to see"
report = "test:nightly-reports"
results = "pr"

[[automations]]
name = "quiet-one"
schedule = "0 4 * * *"
prompt = "nothing to see"
report = "test:nightly-reports"
results = "pr"
quiet = true
'''


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


def _with_automations(repo: Path) -> Path:
    (repo / ".isolator.toml").write_text(AUTOMATIONS)
    (repo / ".gitignore").write_text("build.log\n")  # what the agent always writes
    git("add", ".isolator.toml", ".gitignore", cwd=repo)
    git("commit", "-q", "-m", "automations", cwd=repo)
    return repo


async def _reconcile(stack: Stack, codebase: str) -> dict:
    answer = await stack.api.post("/api/automations/reconcile", json={"codebase": codebase})
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_a_repository_s_automations_report_only_where_its_conversations_already_are(
    stack: Stack, repo: Path
) -> None:
    codebase = (await stack.register(_with_automations(repo)))["name"]
    first = await _reconcile(stack, codebase)
    assert first["made"] == [] and all("does not allow reports to test:nightly-reports" in why
                                       for why in first["refused"]), first
    await stack.say("a-chat", "/status")  # the codebase's conversations now use the test platform
    assert sorted((await _reconcile(stack, codebase))["made"]) == ["nightly", "quiet-one"]
    assert (await _reconcile(stack, codebase))["made"] == [], "nothing changed, nothing made again"
    stack.settings.automation_report_places = "slack:#eng-bots"
    assert (await _reconcile(stack, codebase))["removed"] == ["nightly", "quiet-one"]
    assert (await stack.api.post("/api/automations/reconcile", json={"codebase": "nope"})).status_code == 404


async def test_a_firing_with_nothing_to_do_says_so_in_one_line_or_not_at_all_when_quiet(
    stack: Stack, repo: Path
) -> None:
    codebase = (await stack.register(_with_automations(repo)))["name"]
    await stack.say("a-chat", "/status")
    await _reconcile(stack, codebase)
    assert (await stack.api.post("/api/automations/quiet-one/run")).status_code == 202
    assert (await stack.api.post("/api/automations/nightly/run")).status_code == 202

    async def both_ended() -> bool:
        return await stack.db.fetchval(
            "SELECT count(*) FROM automation_firings WHERE finished_at IS NOT NULL") == 2

    async def reported() -> bool:  # a firing's end is recorded a moment before its report is delivered
        return bool(await stack.replies("nightly-reports"))

    await eventually(both_ended, "both firings' end", seconds=120)
    await eventually(reported, "nightly's report")
    assert await stack.replies("nightly-reports") == ["Automation `nightly`: nothing to do this time."]
    states = await stack.db.fetch("SELECT automation, state FROM automation_firings ORDER BY automation")
    assert [(row["automation"], row["state"]) for row in states] == [("nightly", "nothing"), ("quiet-one", "nothing")]
