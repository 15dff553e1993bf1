"""The worker SIGKILLed between a red CI's webhook and the fix run's start (docs/pr-loop.md): once it is
back, the run still happens, once."""

from __future__ import annotations

import types
from pathlib import Path

import asyncpg
import httpx

from tests.agents import command
from tests.faults.conftest import WorkerProcess, wait_for
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.github_checks import Check
from tests.platforms.github import REPO, URL, deliver, fake, issues_event, settings  # noqa: F401  (fixtures)
from tests.platforms.github_ci import check_suite_completed
from tests.results import eventually, final_message, tip, with_github_origin


async def test_a_worker_killed_before_the_fix_run_starts_runs_it_once(
    worker: WorkerProcess, api: httpx.AsyncClient, db: asyncpg.Pool, fake: FakeGitHub, repo: Path, tmp_path: Path,
) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 8)
    marker = tmp_path / "paused"
    worker.extra_env.update(AGENT_COMMAND=command("changer"), GITHUB_TOKEN=TOKEN, GITHUB_API_URL=fake.api_url)
    worker.start(ISOLATOR_FAULT_PAUSE="read_ci_failure:after", ISOLATOR_FAULT_MARKER=str(marker))
    registered = await api.post("/api/codebases", json={"path": str(repo), "url": URL})
    assert registered.status_code in (200, 201), registered.text
    client = types.SimpleNamespace(api=api)
    response, _ = await deliver(client, "issues", issues_event("opened", 8, "@isolator fix the bug"))  # type: ignore[arg-type]
    assert response.status_code == 202, response.text
    first = str(await _only_run(db))
    await final_message(db, first, "Draft PR #", seconds=120)
    number, head = fake.created_pulls[0]["number"], tip(origin, "refs/heads/issue-8")
    assert head is not None

    suite = fake.checks.add_check_suite(REPO, head, "failure", head_branch="issue-8", pull_numbers=(number,),
                                        check_runs=[Check("tests", "failure", title="2 failed")])
    payload = check_suite_completed(REPO, suite.suite_id, head, "issue-8", "failure", (number,), api_url=fake.api_url)
    response, _ = await deliver(client, "check_suite", payload)  # type: ignore[arg-type]
    assert response.status_code == 202, response.text
    await wait_for(marker, worker, seconds=120)
    worker.kill()
    assert await db.fetchval("SELECT count(*) FROM agent_runs") == 1, "killed before the run was queued"

    worker.start()  # no pause: the loop goes on from its last step
    redelivered, _ = await deliver(client, "check_suite", payload)  # type: ignore[arg-type]
    assert redelivered.status_code == 202, redelivered.text

    async def fixed() -> bool:
        return await db.fetchval("SELECT count(*) FROM agent_runs WHERE message LIKE 'CI failed on %' "
                                 "AND status = 'done'") == 1
    await eventually(fixed, "the fix run done", seconds=120)
    assert await db.fetchval("SELECT count(*) FROM agent_runs") == 2, "one fix run, not two"
    assert await db.fetchval("SELECT fix_attempts FROM pull_requests") == 1


async def _only_run(db: asyncpg.Pool) -> object:
    async def one() -> bool:
        return await db.fetchval("SELECT count(*) FROM agent_runs") == 1
    await eventually(one, "the issue's run", seconds=60)
    return await db.fetchval("SELECT id FROM agent_runs")
