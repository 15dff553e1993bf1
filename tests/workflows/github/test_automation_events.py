"""A repository's own automations (`[[automations]]` in `.isolator.toml`), made, changed and removed by
pushes to its default branch, and fired by GitHub's events: once each, however often GitHub delivers.

Real git (origin a local bare repository), the fake GitHub, real PostgreSQL and Temporal, and a small real
agent (tests/agents/changer.py); the events are signed deliveries shaped as GitHub sends them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import git
from tests.platforms.github import REPO, SENDER, URL, deliver, issues_event, repository
from tests.results import eventually, with_github_origin

TRIAGE = '''
[[automations]]
name = "triage"
on = ["github:issues.labeled:agent"]
prompt = "A new issue needs a first look: {{ event.title }}"
report = "github:origin"
results = "report"
'''


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


def _commit_config(upstream: Path, clone: Path, text: str | None, branch: str = "main") -> str:
    """`.isolator.toml` as `text` (None: removed), committed and pushed to `branch`; the commit's SHA."""
    if not clone.exists():
        git("clone", "-q", str(upstream), str(clone), cwd=upstream.parent)
    git("checkout", "-q", "-B", branch, f"origin/{branch}" if branch == "main" else "HEAD", cwd=clone)
    config = clone / ".isolator.toml"
    if text is None:
        config.unlink()
    else:
        config.write_text(text)
    git("add", "--all", cwd=clone)
    git("-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "automations", cwd=clone)
    git("push", "-q", "origin", f"HEAD:{branch}", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).strip()


def _push(ref: str, after: str) -> dict[str, Any]:
    return {"ref": ref, "before": "0" * 40, "after": after, "repository": repository(), "sender": SENDER,
            "commits": [], "head_commit": {"id": after, "message": "automations"}}


async def _names(stack: Stack) -> dict[str, str]:
    listed = (await stack.api.get("/api/automations")).json()["automations"]
    return {each["name"]: (each["on"], each["report"]) for each in listed}


async def _pushed(stack: Stack, upstream: Path, clone: Path, text: str | None, branch: str = "main") -> None:
    sha = _commit_config(upstream, clone, text, branch)
    response, _ = await deliver(stack, "push", _push(f"refs/heads/{branch}", sha))
    assert response.status_code in (200, 202), response.text
    if branch == "main":
        workflow = f"automations:reconcile:{(await stack.db.fetchval('SELECT id FROM codebases'))}:{sha}"
        await stack.temporal.get_workflow_handle(workflow).result()


async def test_pushes_to_the_default_branch_make_change_and_remove_a_repository_s_automations(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    upstream = fake.origin = with_github_origin(repo)
    await stack.register(repo, url=URL)
    clone = tmp_path / "dev-clone"

    await _pushed(stack, upstream, clone, TRIAGE)
    assert await _names(stack) == {"triage": (["github:issues.labeled:agent"], "github:origin")}
    await _pushed(stack, upstream, clone, TRIAGE.replace(":agent", ":needs-look"))
    assert await _names(stack) == {"triage": (["github:issues.labeled:needs-look"], "github:origin")}
    await _pushed(stack, upstream, clone, TRIAGE.replace("triage", "other-branch"), branch="feature")
    assert list(await _names(stack)) == ["triage"], "a push to another branch changes nothing"
    refused = await stack.api.put("/api/automations/triage", json={"prompt": "p"})
    assert refused.status_code == 409 and "`.isolator.toml`" in refused.json()["detail"]
    await _pushed(stack, upstream, clone, None)
    assert await _names(stack) == {}


async def test_a_labelled_issue_fires_once_however_often_it_is_delivered_and_reports_on_the_issue(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    upstream = fake.origin = with_github_origin(repo)
    await stack.register(repo, url=URL)
    await _pushed(stack, upstream, tmp_path / "dev-clone", TRIAGE)
    fake.add_issue(REPO, 7, title="The login page is slow")
    labelled = issues_event("labeled", 7, "It takes 9 s.")
    labelled["issue"]["title"] = "The login page is slow"
    labelled["label"] = {"id": 208045946, "name": "agent", "color": "f29513", "default": True}
    other = {**labelled, "label": {"id": 1, "name": "wontfix", "color": "ffffff", "default": False}}

    first, _ = await deliver(stack, "issues", labelled)
    assert first.status_code == 202 and first.json()["status"] == "fired", first.text
    again, _ = await deliver(stack, "issues", labelled)  # GitHub's redelivery: a new delivery id, the same event
    assert again.json().get("workflow_id") == first.json()["workflow_id"]
    assert (await deliver(stack, "issues", other))[0].json()["status"] == "ignored"
    ours = {**labelled, "sender": {"login": "isolator", "id": 99, "type": "User"}}  # BOT_MENTION's: what we did
    assert (await deliver(stack, "issues", ours))[0].json()["status"] == "ignored"

    async def reported() -> bool:
        return any("Automation `triage` finished" in comment.body for comment in fake.comments if comment.number == 7)

    await eventually(reported, "the report on issue 7", seconds=120)
    firings = (await stack.api.get("/api/automations/triage")).json()["firings"]
    assert [firing["state"] for firing in firings] == ["done"] and firings[0]["trigger"] == "github:issues.labeled:agent"
    prompt = await stack.db.fetchval("SELECT message FROM agent_runs WHERE platform = 'automation'")
    assert "<untrusted-input>The login page is slow</untrusted-input>" in prompt
