"""GITHUB_ALLOWED_BOTS lets a named bot in; GITHUB_ADMIN_USERS keeps the commands that destroy or
restore work to the people it names, while everyone allowed keeps the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import worktree_paths
from tests.platforms.github import REPO, SENDER, URL, comment_event, deliver, resolution
from tests.trust.github.test_github_refusals import DEPENDABOT

ADMIN = {"login": "The-Boss", "id": 7, "node_id": "MDQ6VXNlcjc=", "type": "User", "site_admin": False}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"github_allowed_bots": frozenset({"dependabot"}),
                                       "github_admin_users": frozenset({"the-boss"})})


async def test_a_listed_bot_is_taken(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 11)
    _, delivery = await deliver(stack, "issue_comment", comment_event(11, "@isolator bump it", sender=DEPENDABOT,
                                                                      association="NONE"))
    assert (await resolution(stack, delivery)).outcome == "created"


async def test_destructive_commands_are_for_the_admins_only(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 12)
    _, created = await deliver(stack, "issue_comment", comment_event(12, "@isolator start"))
    assert (await resolution(stack, created)).outcome == "created"
    paths = worktree_paths(repo)

    for text in ("@isolator /worktree remove issue-12 --force", "@isolator /worktree cleanup merged",
                 "@isolator /worktree restore issue-12", "@isolator /clone https://github.com/octo-org/other"):
        _, delivery = await deliver(stack, "issue_comment", comment_event(12, text, sender=SENDER))
        answer = await resolution(stack, delivery)
        assert answer.outcome == "command"
        assert answer.replies == ["Only the people in `GITHUB_ADMIN_USERS` may run `/clone`, `/worktree remove "
                                  "--force`, `/worktree cleanup`, `/worktree restore` and `/budget +<dollars>` "
                                  "here. To allow you, add your login `octocat` to it."], text
    assert worktree_paths(repo) == paths

    _, listing = await deliver(stack, "issue_comment", comment_event(12, "@isolator /worktree cleanup merged --dry-run"))
    assert "GITHUB_ADMIN_USERS" not in (await resolution(stack, listing)).replies[0]
    _, by_admin = await deliver(stack, "issue_comment", comment_event(12, "@isolator /worktree remove issue-12 --force",
                                                                      sender=ADMIN))
    assert (await resolution(stack, by_admin)).outcome == "command"
    assert worktree_paths(repo) == []
