"""The worker SIGKILLed between the push and the pull request, or just after the pull request was
opened: on retry there is one PR, not two and not none, and its link is told once."""

from __future__ import annotations

import types
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.agents import command
from tests.faults.conftest import WorkerProcess, wait_for
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.platforms.github import REPO, URL, deliver, fake, issues_event, settings  # noqa: F401  (fixtures)
from tests.results import eventually, final_message, run_messages, tip, with_github_origin


@pytest.mark.parametrize("pause", ["push_results:after", "publish_results:after"])
async def test_a_worker_killed_around_the_pull_request_leaves_one_pr(
    worker: WorkerProcess, api: httpx.AsyncClient, db: asyncpg.Pool, fake: FakeGitHub, repo: Path, tmp_path: Path,
    pause: str,
) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 21)
    marker = tmp_path / "paused"
    worker.extra_env.update(AGENT_COMMAND=command("changer"), GITHUB_TOKEN=TOKEN, GITHUB_API_URL=fake.api_url)
    worker.start(ISOLATOR_FAULT_PAUSE=pause, ISOLATOR_FAULT_MARKER=str(marker))
    registered = await api.post("/api/codebases", json={"path": str(repo), "url": URL})
    assert registered.status_code in (200, 201), registered.text
    response, _ = await deliver(types.SimpleNamespace(api=api), "issues",  # type: ignore[arg-type]
                                issues_event("opened", 21, "@isolator fix the bug"))
    assert response.status_code == 202, response.text

    await wait_for(marker, worker, seconds=120)
    worker.kill()
    assert tip(origin, "refs/heads/issue-21") is not None, "killed after the push"
    assert len(fake.created_pulls) == (0 if pause.startswith("push") else 1)

    worker.start()  # no pause: the step is retried
    run_id = str(await db.fetchval("SELECT id FROM agent_runs"))
    line = await final_message(db, run_id, "Draft PR #", seconds=120)
    (pull,) = fake.created_pulls
    assert line.count(f"Draft PR #{pull['number']}:") == 1
    assert sum(f"Draft PR #{pull['number']}:" in text for text in await run_messages(db, run_id)) == 1
    await eventually(lambda: _recorded(db), "the PR recorded")


async def _recorded(db: asyncpg.Pool) -> bool:
    return await db.fetchval("SELECT count(*) FROM pull_requests") == 1
