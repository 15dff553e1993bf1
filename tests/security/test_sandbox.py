"""The sandbox: a hostile agent, run by the service as any agent is (real git, PostgreSQL, Temporal
and bubblewrap), reaches nothing but its worktree and its own branch; what it leaves running goes
with its run; the set-up and teardown run in the same sandbox; SANDBOX=off runs them unconfined and
says so."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from activities.sandbox import bubblewrap
from isolator.settings import Settings, load_settings
from tests.agent_runs import finished_run, replies_when
from tests.agents import command
from tests.archives import archive_git
from tests.conftest import Stack
from tests.gitrepos import git, make_repo

ATTEMPTS = ["read another worktree's file", "read the service's data folder", "read the worker's environment",
            "signal the worker", "write outside the worktree", "delete refs/isolator/*"]
# Inside, this one "works" on the run's own copy of the refs, which the service drops: the test checks
# the shared repository instead (`refs(project) == before`).
IN_ITS_OWN_COPY = "rewrite another conversation's branch"


@pytest.fixture
def marker() -> str:
    return f"left-behind-{uuid.uuid4().hex}"


@pytest.fixture
def place() -> Iterator[Path]:
    """The test's folders, out of /tmp: the sandbox gives the program a /tmp of its own, which would
    hide them whatever else the sandbox did."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="isolator-sandbox-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(settings: Settings, place: Path, marker: str) -> Settings:
    agent = command("hostile", str(place / "worktrees" / "project" / "other" / "secret.txt"),
                    str(place / "data"), str(os.getpid()), str(place / "outside.txt"), "other-branch", marker)
    return load_settings(**{**settings.model_dump(), "data_dir": place / "data", "agent_command_line": agent,
                            "worktree_base_setting": place / "worktrees", "workspace_path_setting": place / "workspace"})


@pytest.fixture
def project(place: Path, settings: Settings) -> Path:
    """A repository with a test suite, two archives (one packed, one loose) and another
    conversation's worktree holding a secret; the service's data folder holds one too."""
    repo = make_repo(place / "repos" / "project")
    (repo / "test_project.py").write_text("def test_the_project_works():\n    assert 1 + 1 == 2\n")
    git("add", "test_project.py", cwd=repo)
    git("commit", "-q", "-m", "tests", cwd=repo)
    git("update-ref", "refs/isolator/archive/packed", "HEAD", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    git("update-ref", "refs/isolator/archive/loose", "HEAD~1", cwd=repo)
    other = settings.worktree_base / "project" / "other"
    git("worktree", "add", "-q", str(other), "-b", "other-branch", cwd=repo)
    (other / "secret.txt").write_text("another conversation's work\n")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    (settings.data_dir / "secret.txt").write_text("the service's data\n")
    return repo


def refs(repo: Path) -> str:
    return git("for-each-ref", "--format=%(refname) %(objectname)", "refs/isolator/", "refs/heads/other-branch",
               cwd=repo)


def host_processes(marker: str) -> list[int]:
    """The hostile agent's background processes still running on the host (`-c … marker`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in words and words[1:2] == [b"-c"]:
            found.append(int(entry.name))
    return found


def assert_every_attempt_failed(report: dict[str, str]) -> None:
    assert report["sandboxed"] == "1", "Claude Code and others are told they run in a sandbox"
    for attempt in ATTEMPTS:
        assert report[attempt].startswith("failed"), f"{attempt}: {report[attempt]}"
    assert report["run the project's tests"].startswith("exit 0"), report["run the project's tests"]
    assert IN_ITS_OWN_COPY in report


async def test_a_hostile_agent_reaches_nothing_but_its_worktree_and_its_own_branch(
    stack: Stack, project: Path, place: Path, marker: str
) -> None:
    before = refs(project)
    await stack.register(project)

    created = (await stack.say("hostile-1", "do your worst"))["result"]
    run = await finished_run(stack, created["agentRunId"])

    assert run["status"] == "done", run
    worktree = Path(created["workingPath"])
    assert_every_attempt_failed(json.loads((worktree / "hostile-report.json").read_text()))
    assert refs(project) == before, "the archives and the other conversation's branch are as they were"
    assert not (place / "outside.txt").exists()
    # Its commit is on its own branch, as the service sees it; the worktree is clean but for its report.
    assert git("log", "-1", "--format=%s", created["branch"], cwd=project).strip() == "hostile agent's commit"
    assert git("show", f"{created['branch']}:hostile.txt", cwd=project) == "edited in the sandbox\n"
    assert "hostile.txt" not in git("status", "--porcelain", cwd=worktree)
    assert run["commits"] == 1
    assert host_processes(marker) == [], "what it left running ended with the run"

    # The next run starts from the commit it made.
    again = (await stack.say("hostile-1", "once more"))["result"]
    assert (await finished_run(stack, again["agentRunId"]))["status"] == "done"
    assert git("rev-list", "--count", created["branch"], cwd=project).strip() == "4"
    assert refs(project) == before


async def test_a_stop_ends_all_the_sandboxed_agent_left_running(stack: Stack, project: Path, marker: str) -> None:
    await stack.register(project)
    created = (await stack.say("hostile-2", "do your worst, then hang"))["result"]
    for _ in range(600):
        if host_processes(marker):
            break
        await asyncio.sleep(0.05)
    assert host_processes(marker), "its background process runs"

    stopped = (await stack.say("hostile-2", "/stop"))["result"]["replies"]

    assert stopped, stopped
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "stopped"
    assert host_processes(marker) == []
    assert_every_attempt_failed(json.loads((Path(created["workingPath"]) / "hostile-report.json").read_text()))


async def test_set_up_and_teardown_run_in_the_same_sandbox(stack: Stack, project: Path, place: Path) -> None:
    stack.settings.agent_command_line = None
    outside = place / "outside.txt"
    probe = (f"echo sandboxed=$IS_SANDBOX pid1=$(tr '\\\\0' ' ' < /proc/1/cmdline | cut -c1-5); "
             f"cat {stack.settings.data_dir}/secret.txt || echo data-hidden; "
             f"touch {outside} || echo read-only")
    (project / ".isolator.toml").write_text(f'[setup]\ncommands = ["({probe}) > setup.txt 2>&1"]\n'
                                            f'[teardown]\ncommands = ["({probe}) > teardown.txt 2>&1"]\n')
    git("add", ".isolator.toml", cwd=project)
    git("commit", "-q", "-m", "set-up", cwd=project)
    await stack.register(project)
    created = (await stack.say("sandbox-setup", "go"))["result"]
    worktree = Path(created["workingPath"])
    for _ in range(600):
        if (worktree / "setup.txt").is_file() and "read-only" in (worktree / "setup.txt").read_text():
            break
        await asyncio.sleep(0.05)
    setup = (worktree / "setup.txt").read_text()
    assert "sandboxed=1 pid1=bwrap" in setup and "data-hidden" in setup and "read-only" in setup, setup

    removed = (await stack.say("sandbox-setup", "/worktree remove --force"))["result"]["replies"]

    assert removed[0].startswith("Removed worktree"), removed
    # What the teardown wrote in the worktree went into the archive, with the rest of it.
    archive = f"refs/isolator/archive/{created['environmentId']}"
    teardown = archive_git(project, "show", f"{archive}:teardown.txt")
    assert "sandboxed=1 pid1=bwrap" in teardown and "data-hidden" in teardown and "read-only" in teardown, teardown
    assert not outside.exists()


async def test_sandbox_off_runs_the_agent_unconfined_and_status_says_so(
    stack: Stack, project: Path, marker: str
) -> None:
    stack.settings.sandbox = "off"
    bubblewrap.configure(stack.settings)
    await stack.register(project)
    created = (await stack.say("sandbox-off", "hello"))["result"]
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "done"
    for pid in host_processes(marker):  # unconfined, what it left running outlives the run
        os.kill(pid, 9)
    report = json.loads((Path(created["workingPath"]) / "hostile-report.json").read_text())
    assert report["read another worktree's file"] == "succeeded: \"another conversation's work\\n\""
    assert report["read the service's data folder"].startswith("succeeded")

    status = (await stack.say("sandbox-off", "/status"))["result"]["replies"][0]

    assert "Warning: SANDBOX=off" in status


async def test_where_the_sandbox_cannot_start_no_user_program_runs_and_the_reply_says_why(
    stack: Stack, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bubblewrap, "BWRAP", "bwrap-not-installed")
    bubblewrap.configure(stack.settings)
    await stack.register(project)
    created = (await stack.say("sandbox-missing", "hello"))["result"]
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "failed"
    replies = await replies_when(stack, "sandbox-missing", lambda texts: len(texts) == 2)
    assert "bubblewrap (`bwrap`) is not installed" in replies[1] and "SANDBOX=off" in replies[1]
    assert not (Path(created["workingPath"]) / "hostile-report.json").exists()
    status = (await stack.say("sandbox-missing", "/status"))["result"]["replies"][0]
    assert "the sandbox cannot start here" in status
