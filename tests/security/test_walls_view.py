"""The walls, second round (issue "Walls, second round", items 1-3): a run sees an allow-list of the
host, not the host with holes. On real git, PostgreSQL, Temporal and bubblewrap, as root (as CI runs),
a run of codebase B reaches none of: a PostgreSQL whose socket lies under `/run` with peer
authentication, even with DATABASE_URL naming it and its parent listed readable; codebase A's main
checkout (its untracked `.env`) and A's archive store; the worker's HOME (`~/.ssh`, `~/.git-credentials`);
`/etc/shadow`; the sockets in `/run`. Its own worktree, the system's programs and a HOME of its own work."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from activities.sandbox import bubblewrap
from tests.agent_runs import finished_run
from tests.agents import command
from tests.archives import archive_refs, archive_store_of
from tests.chat_commands import command as chat_command
from tests.conftest import Stack
from tests.gitrepos import make_repo
from tests.peer_postgres import peer_postgres

@pytest.fixture
def place() -> Iterator[Path]:
    """Out of the test's own folder (writable in the tests' sandbox) and out of /tmp (a run's own)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="isolator-view-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def database_sockets() -> Iterator[Path]:
    assert os.geteuid() == 0, "the server runs as another user, which needs root (the suite runs as root, as CI does)"
    with peer_postgres() as sockets:
        yield sockets


@pytest.fixture
def workers_home(place: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = place / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- the worker's key\n")
    (home / ".git-credentials").write_text("https://worker:ghp_secret@github.com\n")
    monkeypatch.setenv("HOME", str(home))
    return home


async def test_a_run_sees_none_of_the_host_but_what_it_needs(
        stack: Stack, place: Path, database_sockets: Path, workers_home: Path) -> None:
    project_a, project_b = make_repo(place / "a" / "alpha"), make_repo(place / "b" / "beta")
    (project_a / ".env").write_text("SECRET_OF_A=1\n")
    stack.settings.database_url = f"postgresql:///isolator?host={database_sockets}"
    bubblewrap.configure(stack.settings)

    # Codebase A: a conversation whose uncommitted work is archived by a removal.
    stack.settings.agent_command_line = command("changer")
    await stack.register(project_a)
    created_a = (await stack.say("view-a", "leave SECRET_OF_A_ARCHIVE"))["result"]
    assert (await finished_run(stack, created_a["agentRunId"]))["status"] == "done"
    await chat_command(stack, "view-a", "/worktree remove --force")
    assert archive_refs(project_a), "A's uncommitted note is archived"

    socket = database_sockets / ".s.PGSQL.5432"
    store = archive_store_of(project_a)
    stack.settings.agent_command_line = command("snoop", json.dumps({
        "read": [str(project_a / ".env"), str(workers_home / ".ssh" / "id_ed25519"),
                 str(workers_home / ".git-credentials"), "/etc/shadow", str(stack.settings.data_dir / "secret.txt")],
        "list": ["/run", "/var/run", str(database_sockets), "/srv", "/mnt", "/media", "/opt"],
        "log_in": [[str(socket), "postgres"]],
        "run": [["git", "--git-dir", str(store), "log", "--all", "-p"]],
        "see": [str(workers_home), str(place)],
    }))
    stack.settings.data_dir.mkdir(parents=True, exist_ok=True)
    (stack.settings.data_dir / "secret.txt").write_text("the service's data\n")
    await stack.register(project_b)
    await chat_command(stack, "view-b", "/clone beta")
    created_b = (await stack.say("view-b", "look around"))["result"]
    run = await finished_run(stack, created_b["agentRunId"])

    assert run["status"] == "done", run
    report = json.loads((Path(created_b["workingPath"]) / "snoop-report.json").read_text())
    for attempt in ("read its own worktree", "run the system's programs", "write its HOME"):
        assert report.pop(attempt).startswith("succeeded"), attempt
    assert report.pop(f"list {workers_home}") == "succeeded: ['note']", "its HOME is empty but for its own note"
    assert report.pop(f"list {place}") == "succeeded: ['b', 'home']", "the folders of its mounts, no other codebase"
    leaks = {attempt: outcome for attempt, outcome in report.items() if not outcome.startswith("failed")}
    assert leaks == {}, leaks
    assert not (workers_home / "note").exists(), "its HOME was its own"
