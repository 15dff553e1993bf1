"""Chat's `/automation …` on GitHub: only the people in GITHUB_ADMIN_USERS run it; anyone else is told who
may and changes nothing; with GITHUB_ADMIN_USERS empty, no one may (issue 51: "Chat: ADMIN_USERS only")."""

from __future__ import annotations

from pathlib import Path

from tests.automations_made import make_automations
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, URL, comment_event, deliver, person, resolution


async def _answer(stack: Stack, text: str, login: str) -> list[str]:
    _, key = await deliver(stack, "issue_comment", comment_event(21, f"@isolator {text}", sender=person(login)))
    answer = await resolution(stack, key)
    assert answer.outcome == "command", answer
    return answer.replies


async def test_only_admins_run_automation_commands(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    stack.settings.github_admin_users = frozenset({"the-boss"})
    await make_automations(stack, repo, url=URL)
    fake.add_issue(REPO, 21)
    for text in ("/automation list", "/automation pause nightly", "/automation run triage"):
        assert await _answer(stack, text, "octocat") == [
            "Only the people in `GITHUB_ADMIN_USERS` may run `/automation` commands. To allow you, add your login "
            "`octocat` to it."], text
    assert not (await stack.api.get("/api/automations/nightly")).json()["paused"]
    assert await stack.db.fetchval("SELECT count(*) FROM automation_firings") == 0

    paused = await _answer(stack, "/automation pause nightly", "The-Boss")
    assert paused[0].startswith("Paused `nightly`"), paused
    view = (await stack.api.get("/api/automations/nightly")).json()
    assert view["paused"] and view["pausedReason"] == "paused from chat by The-Boss (MEMBER)"


async def test_with_no_admins_no_one_may(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await make_automations(stack, repo, url=URL)
    fake.add_issue(REPO, 21)
    assert await _answer(stack, "/automation list", "octocat") == [
        "Only the people in `GITHUB_ADMIN_USERS` may run `/automation` commands, and it names no one. To allow you, "
        "add your login `octocat` to it."]
