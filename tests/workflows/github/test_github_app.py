"""The service acting as a GitHub App (docs/platforms.md#connect-github), against the fake GitHub that checks
the App's JWT and gives installation tokens with an expiry, through the real PyGithub: a message answered as
`<slug>[bot]` with the installation's token, the bot's own comments starting nothing, a token that expires
mid-way renewed and the call made once more, and a push with the installation token that leaves it nowhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic import SecretStr

from activities.chat.platforms.github import make_deliverer
from activities.chat.platforms.github_app.credentials import banner_line
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.git_http import GitHttpServer
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_app import App
from tests.gitrepos import git
from tests.platforms.github import REPO, URL, comment_event, deliver, issues_event
from tests.platforms.github_app import acting_as, github_app, installation, installed  # noqa: F401  (fixtures)
from tests.platforms.github_prs import settle
from tests.results import final_message, tip, with_github_origin, worktree_of


@pytest.fixture
def settings(settings: Settings, github_app: App, installation: int) -> Settings:
    """The App's id and key, and no GITHUB_TOKEN: whatever reaches GitHub is the App's."""
    return acting_as(settings, github_app)


async def test_a_message_is_answered_as_the_app_and_its_own_comments_start_nothing(
        stack: Stack, fake: FakeGitHub, repo: Path, installation: int) -> None:
    codebase = await stack.register(repo, url=URL)
    fake.add_issue(REPO, 7)
    response, key = await deliver(stack, "issues", installed(issues_event("opened", 7, "@isolator-test look"),
                                                             installation))
    assert response.status_code == 202, response.text
    await settle(stack, key)

    posted = [comment for comment in fake.comments if comment.number == 7]
    assert posted and {comment.author for comment in posted} == {"isolator-test[bot]"}, posted
    assert fake.apps.requests_for(installation) == 1, "one installation token, kept for every call"
    authorizations = {request.headers.get("authorization", "")
                      for request in fake.server.received("POST", r"/repos/.*/comments")}
    assert authorizations and all(value.startswith("token ghs_") for value in authorizations)
    assert await stack.db.fetchval("SELECT github_installation_id FROM codebases WHERE id = $1::uuid",
                                   codebase["id"]) == installation
    assert await stack.db.fetchval("SELECT installation_id FROM github_installations WHERE repository = lower($1)",
                                   REPO) == installation

    own = comment_event(7, "@isolator-test done, see above",
                        sender={"login": "isolator-test[bot]", "id": 9, "type": "Bot", "site_admin": False})
    answer, _ = await deliver(stack, "issue_comment", installed(own, installation))
    assert answer.json() == {"status": "ignored", "reason": "sent by this service"}
    old_name, _ = await deliver(stack, "issue_comment", installed(comment_event(7, "@isolator hello"), installation))
    assert answer.status_code == 200 and old_name.json()["reason"] == "does not mention @isolator-test"


async def test_a_token_that_expires_mid_way_is_renewed_and_the_call_made_once_more(
        settings: Settings, fake: FakeGitHub, installation: int) -> None:
    fake.add_issue(REPO, 8)
    deliver_reply = make_deliverer(settings)
    await deliver_reply(ReplyInput("github", f"{REPO}#8", "first", "k1"))
    await deliver_reply(ReplyInput("github", f"{REPO}#8", "second", "k2"))
    assert fake.apps.requests_for(installation) == 1
    fake.apps.expire_tokens()  # GitHub ends the token while the service still holds it as good
    await deliver_reply(ReplyInput("github", f"{REPO}#8", "third", "k3"))

    assert [comment.body for comment in fake.comments if comment.number == 8] == ["first", "second", "third"]
    assert fake.apps.requests_for(installation) == 2, "renewed once"
    assert len(fake.server.received("POST", r"/repos/.*/issues/8/comments")) == 4, "the refused call, made once more"


async def test_a_401_after_renewal_is_said_not_retried_forever(settings: Settings, fake: FakeGitHub,
                                                               installation: int) -> None:
    fake.add_issue(REPO, 9)
    deliver_reply = make_deliverer(settings)
    await deliver_reply(ReplyInput("github", f"{REPO}#9", "first", "k1"))
    fake.fail("comment", 401, times=2)
    with pytest.raises(Exception, match="HTTP 401"):
        await deliver_reply(ReplyInput("github", f"{REPO}#9", "second", "k2"))
    assert fake.apps.requests_for(installation) == 2, "one renewal, then GitHub's word"


async def test_the_push_uses_the_installation_token_and_leaves_it_nowhere(
        stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path, installation: int) -> None:
    origin = fake.origin = with_github_origin(repo)
    server = GitHttpServer(origin.parent, "unused", accepts=fake.apps.token_is_valid)
    git("remote", "set-url", "origin", f"{server.start()}/{origin.name}", cwd=repo)
    stack.settings.agent_command_line = command("changer", str(tmp_path / "agent.jsonl"))
    fake.add_issue(REPO, 11)
    codebase = await stack.register(repo, url=URL)
    try:
        payload = installed(issues_event("opened", 11, "@isolator-test fix it and push"), installation)
        response, key = await deliver(stack, "issues", payload)
        assert response.status_code == 202, response.text
        run = (await settle(stack, key)).run_id
        assert run
        await final_message(stack.db, run, "Draft PR #")
    finally:
        server.stop()

    worktree = worktree_of(stack, codebase, "issue-11")
    assert tip(origin, "refs/heads/issue-11") == tip(worktree, "HEAD"), "pushed with the installation token"
    assert server.authorized_pushes == 1
    tokens = list(fake.apps.tokens)
    assert tokens and fake.apps.requests_for(installation) == 1
    for token in tokens:
        assert not [argv for argv in server.argv_during_pushes if token in argv], "in no argument list"
        for place in (worktree, repo, stack.settings.data_dir, Path.home() / ".git-credentials",
                      Path.home() / ".gitconfig"):
            if place.exists():
                found = subprocess.run(["grep", "-rlaF", "--", token, str(place)], capture_output=True, text=True)
                assert found.stdout == "", f"the token is written in {found.stdout}"
    assert not [url for url in [git("remote", "get-url", "--push", "origin", cwd=repo)] if "ghs_" in url]
    rows = await stack.db.fetch("SELECT body FROM outbound_messages")
    assert not [row for row in rows if any(token in row["body"] for token in tokens)]


async def test_both_set_the_app_wins_and_the_banner_says_so(settings: Settings, fake: FakeGitHub) -> None:
    both = settings.model_copy(update={"github_token": SecretStr("ghp_other")})
    assert banner_line(both) == (f"as the GitHub App {settings.github_app_id} (GITHUB_APP_ID; GITHUB_TOKEN is set "
                                 "too, the App wins)")
    alone = settings.model_copy(update={"github_app_id": None, "github_app_private_key": None,
                                        "github_token": SecretStr("ghp_other")})
    assert banner_line(alone) == "with GITHUB_TOKEN (a personal token)"
    fake.add_issue(REPO, 12)
    await make_deliverer(both)(ReplyInput("github", f"{REPO}#12", "as whom?", "k12"))
    assert [comment.author for comment in fake.comments] == ["isolator-test[bot]"], "the App wins"
