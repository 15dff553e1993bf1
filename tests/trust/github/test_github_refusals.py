"""GitHub's allow rule: a comment from someone without write access, or from another bot, gets one
reply and changes nothing; members and collaborators work as before."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.platforms.github import REPO, URL, comment_event, deliver, resolution
from tests.trust.checks import nothing_changed, recorded_as_refused

DEPENDABOT = {"login": "dependabot[bot]", "id": 49699333, "node_id": "MDM6Qm90NDk2OTkzMzM=", "type": "Bot",
              "site_admin": False}
STRANGER = {"login": "drive-by", "id": 99, "node_id": "MDQ6VXNlcjk5", "type": "User", "site_admin": False}


async def test_a_comment_from_someone_without_write_access_is_answered_once_and_changes_nothing(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 5)
    payload = comment_event(5, "@isolator please run this", sender=STRANGER, association="NONE")
    response, delivery = await deliver(stack, "issue_comment", payload)
    assert response.status_code == 202, response.text
    refused = await resolution(stack, delivery)
    assert refused.outcome == "refused"
    assert fake.comments == [Comment(REPO, 5, refused.replies[0])]
    assert "yours is NONE" in refused.replies[0] and "`GITHUB_ALLOWED_ASSOCIATIONS`" in refused.replies[0]

    # Within the hour the conversation is not answered again; commands follow the same rule.
    for text in ("@isolator are you there?", "@isolator /status"):
        _, again = await deliver(stack, "issue_comment", comment_event(5, text, sender=STRANGER, association="NONE"))
        assert (await resolution(stack, again)).outcome == "refused"
    assert len(fake.comments) == 1

    # The same comment again, under a delivery id of its own, is recognised: the same workflow, nothing new.
    response, _ = await deliver(stack, "issue_comment", payload)
    assert response.status_code == 202
    assert len(fake.comments) == 1
    await nothing_changed(stack, repo)
    listed = await recorded_as_refused(stack, "github", f"message:github:{delivery}")
    assert (listed["conversation"], listed["sender"]) == (f"github:{REPO}#5", "drive-by (NONE)")
    assert listed["reason"] == refused.replies[0]


async def test_another_bot_is_refused_and_this_service_is_ignored(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 6)
    _, by_bot = await deliver(stack, "issue_comment", comment_event(6, "@isolator bump the lock file",
                                                                    sender=DEPENDABOT, association="NONE"))
    refused = await resolution(stack, by_bot)
    assert refused.outcome == "refused"
    assert fake.comments == [Comment(REPO, 6, "I do not take requests from bots. To allow `dependabot[bot]`, "
                                              "add it to `GITHUB_ALLOWED_BOTS`.")]
    await nothing_changed(stack, repo)


async def test_owners_members_and_collaborators_work_as_before(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    for number, association in [(7, "OWNER"), (8, "MEMBER"), (9, "COLLABORATOR")]:
        fake.add_issue(REPO, number)
        _, delivery = await deliver(stack, "issue_comment", comment_event(number, "@isolator fix it",
                                                                          association=association))
        assert (await resolution(stack, delivery)).outcome == "created", association
    _, contributor = await deliver(stack, "issue_comment", comment_event(7, "@isolator me too",
                                                                         association="CONTRIBUTOR"))
    assert (await resolution(stack, contributor)).outcome == "refused"
