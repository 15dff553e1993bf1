"""Warm worktrees (docs/warm.md): made and set up in advance at the fresh base, claimed exactly once by
a new conversation, refilled in the background, kept at the base. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

from activities.git.disk_usage import disk_usage
from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.conftest import Stack
from tests.gitrepos import clone_with_origin, git, push_to_origin, worktree_paths
from tests.workflows.test_archives import run_scheduled_cleanup
from tests.workflows.test_ready_to_work import commit_config, ports_of, settled, why_not_ready

# Each run of the set-up adds a line: the number of lines is the number of runs in that worktree.
SLOW_SETUP = ('[setup]\ncommands = ["sleep 3", "echo run >> setup-runs.txt", "cp .env built-from-env.txt", '
              '"echo $ISOLATOR_PORTS > ports.txt"]\n[worktree]\nports = 2\n')


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"warm_worktrees": 1, "max_worktrees_per_codebase": 40,
                                       "agent_command_line": f"{sys.executable} -c \"print('agent here')\""})


async def warm_rows(stack: Stack, codebase_id: str) -> list[dict]:
    rows = await stack.db.fetch("SELECT * FROM warm_worktrees WHERE codebase_id = $1 ORDER BY created_at",
                                uuid.UUID(codebase_id))
    return [dict(row) for row in rows]


async def pool_settles(stack: Stack, codebase_id: str, ready: int, base: str | None = None,
                       seconds: float = 90) -> list[dict]:
    """The pool once it holds `ready` ready worktrees (at `base`) and nothing else."""
    for _ in range(int(seconds * 10)):
        rows = await warm_rows(stack, codebase_id)
        if len(rows) == ready and all(row["state"] == "ready" for row in rows) \
                and (base is None or all(row["base_commit"] == base for row in rows)):
            return rows
        await asyncio.sleep(0.1)
    raise AssertionError(f"the warm pool did not settle at {ready} ready: {rows}")


async def refills_done(stack: Stack, codebase_id: str) -> int:
    """How many refills the codebase's pool workflow has finished (in its current run)."""
    history = await stack.temporal.get_workflow_handle(f"warm-pool:{codebase_id}").fetch_history()
    return sum(1 for event in history.events if event.HasField("activity_task_completed_event_attributes"))


def with_include(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\nsetup-runs.txt\nbuilt-from-env.txt\nports.txt\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    git("add", ".gitignore", ".worktreeinclude", cwd=repo)
    git("commit", "-q", "-m", "include .env", cwd=repo)
    (repo / ".env").write_text("SECRET_OF_THE_CHECKOUT=1\n")


async def test_a_new_conversation_claims_a_set_up_warm_worktree_on_its_own_branch(stack: Stack, repo: Path) -> None:
    with_include(repo)
    commit_config(repo, SLOW_SETUP)
    codebase = await stack.register(repo)
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    assert Path(warm["path"]).is_relative_to(stack.settings.worktree_base / ".warm")
    assert (Path(warm["path"]) / "setup-runs.txt").read_text() == "run\n", "set up before any message"
    base = git("rev-parse", "main", cwd=repo).strip()

    created = (await stack.say("warm-1", "hello"))["result"]

    assert created["outcome"] == "created"
    worktree = Path(created["workingPath"])
    assert worktree == stack.settings.worktree_base / "project" / created["branch"]
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=worktree).strip() == created["branch"]
    assert git("rev-parse", "HEAD", cwd=worktree).strip() == base
    assert git("status", "--porcelain", "--untracked-files=no", cwd=worktree) == "", "its files are the branch's"
    assert (worktree / ".env").read_text() == "SECRET_OF_THE_CHECKOUT=1\n"
    assert (worktree / "built-from-env.txt").exists(), "the set-up's results came with it"
    assert not Path(warm["path"]).exists()
    # The agent answered; the set-up was not run again (one line), yet the environment is ready.
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "done"
    assert await settled(stack, created["environmentId"]) == "ready"
    assert (worktree / "setup-runs.txt").read_text() == "run\n"
    ports = await ports_of(stack, created["environmentId"])
    assert len(ports) == 2
    # The warm set-up wrote the ports it was given: the environment holds those very ports.
    assert (worktree / "ports.txt").read_text() == f"{min(ports)}-{max(ports)}\n"
    replies = await stack.replies("warm-1")
    assert replies[0].startswith(f"Working in isolated branch `{created['branch']}`"), replies
    assert not any("Setting up" in reply for reply in replies)
    # The pool made another, the environment's worktree is no orphan, and the pool no environment.
    [again] = await pool_settles(stack, codebase["id"], ready=1)
    assert again["path"] != warm["path"]
    listing = (await stack.say("warm-1", "/worktree list"))["result"]["replies"][0]
    assert "orphan" not in listing.lower() and "Warm worktrees: 1 of 1 ready" in listing
    status = (await stack.say("warm-1", "/status"))["result"]["replies"][0]
    assert "Warm worktrees: 1 of 1 ready" in status
    view = (await stack.api.get(f"/api/codebases/{codebase['id']}")).json()["warm_pool"]
    assert view["size"] == 1 and view["ready"] == 1 and view["worktrees"][0]["base_commit"] == base


async def test_a_codebase_registered_by_clone_in_a_chat_gets_its_pool_at_once(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = ["echo run >> setup-runs.txt"]\n')

    linked = (await stack.say("clone-1", f"/clone {repo}"))["result"]

    assert linked["outcome"] != "created", "no worktree asked for yet"
    [codebase] = (await stack.api.get("/api/codebases")).json()
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    assert (Path(warm["path"]) / "setup-runs.txt").read_text() == "run\n", "made and set up before any create"
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    created = (await stack.say("clone-1", "go"))["result"]
    worktree = Path(created["workingPath"])
    assert created["outcome"] == "created" and (worktree / "setup-runs.txt").read_text() == "run\n"
    assert (worktree / ".git").read_text().strip().rsplit("/", 1)[1] == Path(warm["path"]).name, "it was claimed"


async def test_twenty_conversations_at_once_get_twenty_worktrees_and_the_pool_refills(
    stack: Stack, repo: Path
) -> None:
    commit_config(repo, '[setup]\ncommands = ["echo run >> setup-runs.txt"]\n[worktree]\nports = 1\n')
    codebase = await stack.register(repo)
    changed = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": 2})
    assert changed.status_code == 200 and changed.json()["warm_pool"]["size"] == 2
    before = await pool_settles(stack, codebase["id"], ready=2)

    results = await asyncio.gather(*(stack.say(f"burst-{number}", "go") for number in range(20)))

    created = [result["result"] for result in results]
    assert [result for result in created if result["outcome"] != "created"] == []
    paths = {result["workingPath"] for result in created}
    assert len(paths) == 20 and len({result["branch"] for result in created}) == 20
    assert len(worktree_paths(repo)) >= 20
    for number, result in enumerate(created):
        assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=Path(result["workingPath"])).strip() == result["branch"]
        assert await settled(stack, result["environmentId"]) == "ready", (
            await stack.replies(f"burst-{number}"), await why_not_ready(stack, result["environmentId"]))
        assert (Path(result["workingPath"]) / "setup-runs.txt").read_text() == "run\n", "set up once, not twice"
    # git's record of each worktree keeps the name it was made with: a claimed one, its warm name.
    made_as = [(Path(path) / ".git").read_text().strip().rsplit("/", 1)[1] for path in paths]
    assert len(set(made_as)) == 20, "no worktree was handed out twice"
    assert {Path(row["path"]).name for row in before} <= set(made_as), "both warm worktrees were claimed"
    after = await pool_settles(stack, codebase["id"], ready=2)
    assert not {row["path"] for row in after} & paths
    ports = [await ports_of(stack, result["environmentId"]) for result in created]
    assert len({port for block in ports for port in block}) == 20


async def test_warm_worktrees_follow_the_base_and_set_up_again_only_when_an_input_changed(
    stack: Stack, tmp_path: Path
) -> None:
    origin, checkout = clone_with_origin(tmp_path / "moving")
    stack.settings.fetch_interval_seconds = 0  # every refill fetches
    config = '[setup]\ncommands = ["echo run >> setup-runs.txt"]\ninputs = ["deps.lock"]\n'
    commit_config(checkout, config)
    git("push", "-q", "origin", "main", cwd=checkout)
    codebase = await stack.register(checkout)
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    path = Path(warm["path"])

    moved = push_to_origin(origin, tmp_path, "readme")  # no input changed
    await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": None})  # asks a refill
    [warm] = await pool_settles(stack, codebase["id"], ready=1, base=moved)
    assert Path(warm["path"]) == path and (path / "readme.txt").exists()
    assert (path / "setup-runs.txt").read_text() == "run\n", "no input changed: not set up again"

    elsewhere = tmp_path / "colleague-lock"
    git("clone", "-q", str(origin), str(elsewhere), cwd=tmp_path)
    (elsewhere / "deps.lock").write_text("left-pad 1.0\n")
    git("add", ".", cwd=elsewhere)
    git("commit", "-q", "-m", "lock", cwd=elsewhere)
    git("push", "-q", "origin", "main", cwd=elsewhere)
    locked = git("rev-parse", "HEAD", cwd=elsewhere).strip()
    await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": None})
    [warm] = await pool_settles(stack, codebase["id"], ready=1, base=locked)
    assert (path / "setup-runs.txt").read_text() == "run\nrun\n", "its input changed: set up again"

    created = (await stack.say("moving-1", "go"))["result"]
    assert git("rev-parse", "HEAD", cwd=Path(created["workingPath"])).strip() == locked


async def test_with_warm_false_the_setup_runs_after_the_claim_with_the_branch_known(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\nwarm = false\ncommands = ["echo $ISOLATOR_BRANCH >> setup-branch.txt"]\n')
    codebase = await stack.register(repo)
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    assert not (Path(warm["path"]) / "setup-branch.txt").exists(), "not set up before the claim"

    created = (await stack.say("late-1", "go"))["result"]
    assert Path(created["workingPath"]).name == created["branch"]
    assert await settled(stack, created["environmentId"]) == "ready"
    assert (Path(created["workingPath"]) / "setup-branch.txt").read_text() == f"{created['branch']}\n"
    assert not warm["setup_ran"]


async def test_a_failed_warm_setup_is_not_claimed_and_its_reason_is_shown(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = ["echo no compiler here; exit 4"]\n')
    codebase = await stack.register(repo)
    for _ in range(900):
        rows = await warm_rows(stack, codebase["id"])
        if rows and rows[0]["state"] == "failed":
            break
        await asyncio.sleep(0.1)
    assert rows[0]["failure"] == "`echo no compiler here; exit 4` exited with code 4: no compiler here"

    created = (await stack.say("failing-1", "go"))["result"]
    assert created["outcome"] == "created"
    assert Path(created["workingPath"]) != Path(rows[0]["path"]) and Path(rows[0]["path"]).exists()
    assert await settled(stack, created["environmentId"]) == "failed", "made as before, its own set-up ran"
    status = (await stack.say("failing-1", "/status"))["result"]["replies"][0]
    assert "warm set-up failed: `echo no compiler here; exit 4` exited with code 4" in status


async def test_a_pool_set_to_zero_is_emptied_and_creates_are_made_as_before(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    await pool_settles(stack, codebase["id"], ready=1)
    off = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": 0})
    assert off.json()["warm_pool"]["size"] == 0
    await pool_settles(stack, codebase["id"], ready=0)
    assert not list((stack.settings.worktree_base / ".warm" / "project").iterdir())
    created = (await stack.say("cold-1", "go"))["result"]
    assert created["outcome"] == "created" and await warm_rows(stack, codebase["id"]) == []
    bad = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": 21})
    assert bad.status_code == 422


async def test_warm_worktrees_count_in_the_disk_budget_and_go_first(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    await pool_settles(stack, codebase["id"], ready=1)
    created = (await stack.say("budget-1", "go"))["result"]
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    environment_bytes = disk_usage(Path(created["workingPath"]), 10)[0]
    stack.settings.disk_budget_gb = (environment_bytes + warm["disk_bytes"] - 1) / 1024**3  # not both

    result = await run_scheduled_cleanup(stack)

    assert result["codebases"][0]["hibernated"] == [], "the warm worktree went, not the environment"
    assert not Path(warm["path"]).exists() and Path(created["workingPath"]).is_dir()
    done = await refills_done(stack, codebase["id"])
    await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": None})  # asks a refill
    while await refills_done(stack, codebase["id"]) == done:
        await asyncio.sleep(0.1)
    view = (await stack.api.get(f"/api/codebases/{codebase['id']}")).json()["warm_pool"]
    assert view["worktrees"] == [], "not made again while the budget has no room for it"
