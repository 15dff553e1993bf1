"""A user's mistake in a registration (`/clone /etc`, a URL that cannot be cloned) is an answer, not a
failure (issue 31): the registration workflow completes with the reason, the worker logs one line and no
traceback, and the user is told what is wrong."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus

from isolator.contracts.codebase import RepositorySource
from tests.chat_commands import say_one
from tests.conftest import Stack
from tests.gitrepos import make_repo
from workflows.codebase import register_workflow_id


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.exc_info and record.levelno >= logging.INFO]


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    # the message as logged, without the workflow's details the SDK appends in parentheses
    return [record.getMessage().split(" ({")[0] for record in caplog.records
            if "registration of" in record.getMessage()]


async def test_clone_of_a_folder_that_is_no_repository_completes_with_the_reason(
        stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    answer = await stack.say("mistake-1", "/clone /etc")
    assert answer["result"]["replies"][0].startswith("Could not register `/etc`: `/etc` is not a git repository.")

    child = stack.temporal.get_workflow_handle(f"{answer['workflowId']}:clone")
    assert (await child.describe()).status == WorkflowExecutionStatus.COMPLETED
    assert (await child.result())["problem"] == "`/etc` is not a git repository."
    assert tracebacks(caplog) == []
    assert refusals(caplog) == ["registration of /etc refused: `/etc` is not a git repository."]
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0


async def test_an_api_registration_of_a_url_that_cannot_be_cloned_is_a_422_and_a_completed_workflow(
        stack: Stack, caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    caplog.set_level(logging.INFO)
    url = (tmp_path / "nothing-here.git").as_uri()
    refused = await stack.api.post("/api/codebases", json={"url": url})
    assert refused.status_code == 422 and refused.json()["detail"].startswith(f"Could not clone {url}")

    handle = stack.temporal.get_workflow_handle(register_workflow_id(RepositorySource(stack.settings.host, url=url)))
    assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED
    assert tracebacks(caplog) == []
    assert len(refusals(caplog)) == 1
    workspace = stack.settings.workspace_path
    assert not workspace.exists() or list(workspace.iterdir()) == [], "no clone left behind"


async def test_a_name_taken_is_still_a_409(stack: Stack, repo: Path, tmp_path: Path) -> None:
    await stack.register(repo)
    other = tmp_path / "elsewhere" / "project"
    other.mkdir(parents=True)
    make_repo(other / "inner")
    taken = await stack.api.post("/api/codebases", json={"path": str(other / "inner"), "name": "project"})
    assert taken.status_code == 409 and "already registered as `project`" in taken.json()["detail"]
    assert (await say_one(stack, "mistake-2", f"/clone {other / 'inner'}")).startswith("Registered repository `inner`")


async def test_a_subfolder_of_a_repository_is_refused_with_its_root(stack: Stack, repo: Path) -> None:
    """Registering a folder inside a checkout used to register the whole repository without a word."""
    (repo / "src").mkdir()
    refused = await stack.api.post("/api/codebases", json={"path": str(repo / "src")})
    assert refused.status_code == 422
    assert refused.json()["detail"] == (f"`{repo / 'src'}` is a folder inside the repository `{repo.resolve()}`; "
                                        f"give the repository's root `{repo.resolve()}`.")
    in_chat = await say_one(stack, "mistake-3", f"/clone {repo / 'src'}")
    assert "give the repository's root" in in_chat, in_chat
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
    assert (await stack.api.post("/api/codebases", json={"path": str(repo)})).status_code == 201
