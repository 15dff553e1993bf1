"""The agent never holds the service's credentials; the service's push gets them through a credential
helper only. Origin is served over smart HTTP (`git http-backend`), as GitHub serves a public
repository: fetching is open, a push needs the token."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.agents import command
from tests.conftest import Stack
from tests.fakes.git_http import GitHttpServer
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.gitrepos import git
from tests.platforms.github import REPO, URL
from tests.results import final_message, say_on_issue, tip, with_github_origin, worktree_of
from workflows.environment import EnvironmentWorkflow


async def test_the_token_reaches_only_the_services_push_never_the_agent_an_argv_or_a_log(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # the worker's environment holds it, as in production
    origin = fake.origin = with_github_origin(repo)
    server = GitHttpServer(origin.parent, TOKEN)
    git("remote", "set-url", "origin", f"{server.start()}/{origin.name}", cwd=repo)
    notes = tmp_path / "agent.jsonl"
    stack.settings.agent_command_line = command("changer", str(notes))
    fake.add_issue(REPO, 11)
    codebase = await stack.register(repo, url=URL)
    try:
        run = await say_on_issue(stack, 11, "@isolator fix it and push", opened=True)
        line = await final_message(stack.db, run, "Draft PR #")
    finally:
        server.stop()

    worktree = worktree_of(stack, codebase, "issue-11")
    assert tip(origin, "refs/heads/issue-11") == tip(worktree, "HEAD"), "the service's push went through"
    assert server.authorized_pushes == 1 and server.argv_during_pushes

    (note,) = [json.loads(text) for text in notes.read_text().splitlines()]
    assert note["push"]["code"] != 0, f"the agent's own push must fail: {note['push']}"
    assert server.refused_pushes >= 1
    assert "GITHUB_TOKEN" not in note["env"] and TOKEN not in json.dumps(note["env"]), "no token in the agent's environment"

    assert not [argv for argv in server.argv_during_pushes if TOKEN in argv], "no token in any argument list"
    assert TOKEN not in caplog.text, "no token in a log line"
    assert TOKEN not in line
    runs = await stack.db.fetch("SELECT output, log FROM agent_runs")
    messages = await stack.db.fetch("SELECT body FROM outbound_messages")
    assert not [row for row in [*runs, *messages] if any(TOKEN in (value or "") for value in row.values())]
    assert TOKEN not in (repo / ".git" / "config").read_text() and not (Path.home() / ".git-credentials").exists() \
        or TOKEN not in (Path.home() / ".git-credentials").read_text(), "the token is stored nowhere"
    environment_id = await stack.db.fetchval("SELECT id::text FROM isolation_environments")
    history = await stack.temporal.get_workflow_handle_for(
        EnvironmentWorkflow.run, f"environment:{environment_id}").fetch_history()
    assert TOKEN not in history.to_json(), "nor in a workflow's history"
