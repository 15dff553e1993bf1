"""The GitHub activities on their own, through the real PyGithub against the fake GitHub API:
completing a PR's hints (REST for the head, GraphQL for the issues it closes) and commenting."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.github import complete_hints, make_deliverer
from isolator.contracts.message import IsolationHints, ReplyInput
from isolator.settings import Settings
from tests.conftest import free_port
from tests.fakes.github_api import TOKEN, Comment, FakeGitHub
from tests.platforms.github import REPO, URL

# --- completing a PR's hints through PyGithub ----------------------------------------------------


async def test_a_pr_comment_gets_its_head_from_rest_and_its_closing_issues_from_graphql(
    settings: Settings, fake: FakeGitHub
) -> None:
    fake.add_pull(REPO, 99, "feature/login", "c" * 40, closes=(42, "someone-else/other#5", 43))
    fake.add_pull(REPO, 100, "patch-1", "d" * 40, head_repository="contributor/hello-world", closes=(7,))
    fake.add_pull(REPO, 101, "gone", "e" * 40, head_repository=None)
    from_comment = IsolationHints(workflow_type="pr", workflow_id="99", repository_url=URL, needs_completion=True)

    completed = await complete_hints(settings, f"{REPO}#99", from_comment)
    assert (completed.pr_head_branch, completed.pr_head_sha, completed.pr_is_fork) == ("feature/login", "c" * 40, False)
    assert (completed.linked_issues, completed.needs_completion, completed.repository_url) == (["42", "43"], False, URL)
    graphql = fake.server.received("POST", "/graphql")[0].json()
    assert graphql["variables"] == {"owner": "octo-org", "name": "hello-world", "number": 99}

    fork = await complete_hints(settings, f"{REPO}#100", IsolationHints(workflow_type="pr", workflow_id="100"))
    assert (fork.pr_head_branch, fork.pr_is_fork, fork.linked_issues) == ("patch-1", True, ["7"])
    deleted = await complete_hints(settings, f"{REPO}#101", IsolationHints(workflow_type="pr", workflow_id="101"))
    assert (deleted.pr_head_sha, deleted.pr_is_fork, deleted.linked_issues) == ("e" * 40, True, [])

    # A pull_request event carries the head: only GraphQL is asked.
    pulls = fake.calls("pull")
    known = IsolationHints(workflow_type="pr", workflow_id="99", pr_head_branch="feature/login", pr_head_sha="c" * 40)
    assert (await complete_hints(settings, f"{REPO}#99", known)).linked_issues == ["42", "43"]
    assert fake.calls("pull") == pulls

    # Issues and threads need nothing from GitHub.
    requests = len(fake.server.requests)
    issue_hints = IsolationHints(workflow_type="issue", workflow_id="42")
    assert await complete_hints(settings, f"{REPO}#42", issue_hints) is issue_hints
    assert len(fake.server.requests) == requests


async def test_complete_hints_without_a_token_reads_the_head_anonymously_and_skips_graphql(
    settings: Settings, fake: FakeGitHub
) -> None:
    fake.add_pull(REPO, 99, "feature/login", "c" * 40, closes=(42,))
    anonymous = settings.model_copy(update={"github_token": None})
    completed = await complete_hints(anonymous, f"{REPO}#99", IsolationHints(workflow_type="pr", workflow_id="99"))
    assert (completed.pr_head_branch, completed.linked_issues) == ("feature/login", [])
    assert fake.calls("graphql") == 0
    assert "authorization" not in fake.server.received("GET")[0].headers


@pytest.mark.parametrize(
    ("route", "status", "retryable"),
    [("pull", 404, False), ("pull", 401, False), ("pull", 403, False), ("pull", 502, True), ("graphql", 429, True),
     ("graphql", 500, True), ("graphql", 422, False)],
)
async def test_complete_hints_retries_only_what_waiting_can_fix(
    settings: Settings, fake: FakeGitHub, route: str, status: int, retryable: bool
) -> None:
    fake.add_pull(REPO, 99, "feature/login", "c" * 40)
    fake.fail(route, status)
    with pytest.raises(ApplicationError) as raised:
        await complete_hints(settings, f"{REPO}#99", IsolationHints(workflow_type="pr", workflow_id="99"))
    assert raised.value.non_retryable is not retryable
    assert f"HTTP {status}" in str(raised.value)


async def test_complete_hints_for_a_pr_github_does_not_know_is_final(settings: Settings, fake: FakeGitHub) -> None:
    fake.add_repository(REPO)
    known_head = IsolationHints(workflow_type="pr", workflow_id="5", pr_head_branch="x", pr_head_sha="f" * 40)
    with pytest.raises(ApplicationError, match="Could not resolve to a PullRequest") as raised:
        await complete_hints(settings, f"{REPO}#5", known_head)
    assert raised.value.non_retryable


# --- the deliverer -------------------------------------------------------------------------------


async def test_the_deliverer_comments_on_the_issue_or_pr(settings: Settings, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    fake.add_pull(REPO, 99, "feature/login", "c" * 40)
    send = make_deliverer(settings)
    await send(ReplyInput("github", f"{REPO}#42", "on the issue", idempotency_key="k1"))
    await send(ReplyInput("github", f"{REPO}#99", "on the PR", idempotency_key="k2"))
    assert fake.comments == [Comment(REPO, 42, "on the issue"), Comment(REPO, 99, "on the PR")]
    assert fake.server.received("POST")[0].headers["authorization"] == f"token {TOKEN}"


@pytest.mark.parametrize(("status", "retryable"), [(404, False), (401, False), (422, False), (429, True), (503, True)])
async def test_the_deliverer_retries_only_what_waiting_can_fix(
    settings: Settings, fake: FakeGitHub, status: int, retryable: bool
) -> None:
    fake.add_issue(REPO, 42)
    fake.fail("comment", status)
    with pytest.raises(ApplicationError) as raised:
        await make_deliverer(settings)(ReplyInput("github", f"{REPO}#42", "hello", idempotency_key="k3"))
    assert raised.value.non_retryable is not retryable
    assert fake.comments == []


async def test_the_deliverer_refuses_unknown_issues_missing_tokens_and_retries_when_github_is_unreachable(
    settings: Settings, fake: FakeGitHub
) -> None:
    with pytest.raises(ApplicationError, match="HTTP 404") as raised:
        await make_deliverer(settings)(ReplyInput("github", f"{REPO}#404", "hello", idempotency_key="k4"))
    assert raised.value.non_retryable

    without_token = make_deliverer(settings.model_copy(update={"github_token": None}))
    with pytest.raises(ApplicationError, match="GITHUB_TOKEN is not set") as raised:
        await without_token(ReplyInput("github", f"{REPO}#42", "hello", idempotency_key="k5"))
    assert raised.value.non_retryable

    unreachable = make_deliverer(settings.model_copy(update={"github_api_url": f"http://127.0.0.1:{free_port()}"}))
    with pytest.raises(Exception) as raised_unreachable:
        await unreachable(ReplyInput("github", f"{REPO}#42", "hello", idempotency_key="k6"))
    assert not isinstance(raised_unreachable.value, ApplicationError), "a connection error is retried by Temporal"
    assert fake.server.requests and fake.comments == []
