"""`isolator dev` as a real subprocess: embedded PostgreSQL, Temporal dev server, worker and API,
started and stopped the way a developer would, with state in a temporary data dir."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.dev_process import (
    FLAGS,
    STOP_TIMEOUT,
    Dev,
    cmdline,
    command_lines_mentioning,
    free_ports,
    is_running,
    port_is_free,
    process_tree,
    say,
)
from tests.gitrepos import make_repo
from workers.temporal_server import temporal_binary


def test_dev_starts_announces_its_addresses_and_is_ready(start_dev, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    dev = start_dev(data_dir)

    pairs = (line.split(":", 1) for line in dev.stdout().splitlines() if ":" in line)
    lines = {key.strip(): value.strip() for key, value in pairs}
    assert lines["API"].startswith(dev.api), dev.logs()
    assert lines["Temporal UI"] == f"http://127.0.0.1:{dev.ui_port}"
    assert lines["Temporal"] == f"127.0.0.1:{dev.temporal_port}"
    assert lines["Database"].startswith("postgresql://") and "/isolator" in lines["Database"]
    assert lines["Data dir"] == str(data_dir)
    assert lines["Worktrees"] == str(tmp_path / "worktrees")  # WORKTREE_BASE from the environment
    assert dev.postmaster() is not None, "the embedded PostgreSQL must live in the data dir"
    assert not (tmp_path / "env-data-dir").exists(), "--data-dir must win over ISOLATOR_DATA_DIR"

    assert httpx.get(f"{dev.api}/healthz").status_code == 200
    ready = httpx.get(f"{dev.api}/readyz")
    assert ready.status_code == 200
    assert ready.json() | {"hosts": {}} == {"status": "ready", "database": "ok", "temporal": "ok", "hosts": {}}
    assert httpx.get(lines["Temporal UI"], timeout=10).status_code == 200


def test_restart_on_the_same_data_dir_keeps_codebases_conversations_and_history(start_dev, tmp_path: Path) -> None:
    data_dir, repo = tmp_path / "data", make_repo(tmp_path / "repos" / "project")
    dev = start_dev(data_dir)
    registered = httpx.post(f"{dev.api}/api/codebases", json={"path": str(repo)}, timeout=60)
    assert registered.status_code == 201, registered.text
    first = say(dev, "restart-conv", "fix the login bug")
    assert first["result"]["outcome"] == "created", first
    working_path = first["result"]["workingPath"]
    assert Path(working_path).is_relative_to(tmp_path / "worktrees")
    assert dev.stop(signal.SIGTERM) == 0, dev.logs()

    # Same data dir and same ports, as when a developer simply runs `isolator dev` again.
    dev = start_dev(data_dir, dev.ports)
    codebases = httpx.get(f"{dev.api}/api/codebases").json()
    assert [(item["name"], item["canonical_path"]) for item in codebases] == [("project", str(repo.resolve()))]
    second = say(dev, "restart-conv", "and the logout bug")
    assert second["result"]["outcome"] == "reused", second
    assert second["result"]["workingPath"] == working_path
    assert second["result"]["environmentId"] == first["result"]["environmentId"]

    # The first message's workflow survived the restart in Temporal's own database.
    described = subprocess.run(
        [temporal_binary(), "workflow", "describe", "--address", f"127.0.0.1:{dev.temporal_port}",
         "-w", first["workflowId"], "-o", "json"],
        capture_output=True, text=True, timeout=30,
    )
    assert described.returncode == 0, described.stderr
    history = json.loads(described.stdout)
    assert history["workflowExecutionInfo"]["execution"]["runId"] == first["runId"]
    assert history["workflowExecutionInfo"]["status"] == "WORKFLOW_EXECUTION_STATUS_COMPLETED"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "ctrl-c", "SIGHUP"])
def test_stopping_exits_promptly_and_leaves_no_process_behind(start_dev, tmp_path: Path, sig: signal.Signals) -> None:
    dev = start_dev(tmp_path / "data")
    assert dev.process is not None
    tree = process_tree(dev.process.pid)
    postmaster = dev.postmaster()
    assert postmaster is not None
    postgres = process_tree(postmaster[0])
    assert any("temporal server start-dev" in cmdline(pid) for pid, _ in tree), tree
    assert len(postgres) > 1, "the postmaster and its background processes"

    began = time.monotonic()
    assert dev.stop(sig) == 0, dev.logs()
    assert time.monotonic() - began < STOP_TIMEOUT
    assert "isolator dev stopped" in dev.err_path.read_text()

    assert [process for process in tree if is_running(process)] == []
    assert [process for process in postgres if is_running(process)] == [], "the embedded PostgreSQL is still running"
    assert command_lines_mentioning(str(dev.data_dir)) == []
    assert [port for port in dev.ports if not port_is_free(port)] == []


def test_after_a_crash_the_next_run_still_stops_postgres(start_dev, tmp_path: Path) -> None:
    # SIGKILL (or OOM) allows no cleanup: Temporal follows its parent (PR_SET_PDEATHSIG), the daemonized
    # PostgreSQL stays up. The next run joins it, and must stop it on exit: pgserver counts its users by
    # pid in the data dir, and the dead run's pid used to stay counted for ever.
    dev = start_dev(tmp_path / "data")
    assert dev.process is not None
    temporal = [process for process in process_tree(dev.process.pid) if "start-dev" in cmdline(process[0])]
    dev.process.kill()
    dev.process.wait()
    deadline = time.monotonic() + STOP_TIMEOUT
    while (still := [process for process in temporal if is_running(process)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert temporal and not still, "Temporal outlived its parent"
    postmaster = dev.postmaster()
    assert postmaster is not None and is_running(postmaster)

    dev = start_dev(dev.data_dir, dev.ports)
    assert dev.postmaster() == postmaster, "the running server is joined, not replaced"
    postgres = process_tree(postmaster[0])
    assert dev.stop(signal.SIGTERM) == 0, dev.logs()
    assert [process for process in postgres if is_running(process)] == [], "the embedded PostgreSQL is still running"


def refused_start(tmp_path: Path, ports: dict[str, int]) -> str:
    """Run `isolator dev` where it must refuse to start; check it did so quickly, with a one-line
    error and having started nothing (no state, no Temporal or PostgreSQL); return that line."""
    dev = Dev(tmp_path, tmp_path / "data", list(ports.values()))
    began = time.monotonic()
    try:
        returncode = dev.start(wait_ready=False).process.wait(60)  # type: ignore[union-attr]
    finally:
        dev.kill()  # only does something if it did start after all
    elapsed = time.monotonic() - began
    assert returncode != 0
    lines = dev.err_path.read_text().strip().splitlines()
    assert len(lines) == 1, dev.logs()
    assert elapsed < 15, f"took {elapsed:.1f} s"
    assert not dev.data_dir.exists() and not (tmp_path / "env-data-dir").exists()
    assert command_lines_mentioning(str(dev.data_dir)) == []
    return lines[0]


@pytest.mark.parametrize("taken_flag", FLAGS)
def test_a_taken_port_fails_fast_with_one_line_naming_port_and_flag(tmp_path: Path, taken_flag: str) -> None:
    ports = dict(zip(FLAGS, free_ports(3)))
    with socket.socket() as occupant:
        occupant.bind(("127.0.0.1", ports[taken_flag]))
        occupant.listen()
        error = refused_start(tmp_path, ports)
    assert str(ports[taken_flag]) in error and taken_flag in error, error
    assert all(port_is_free(port) for flag, port in ports.items() if flag != taken_flag)


@pytest.mark.parametrize("first, second", [(0, 1), (0, 2), (1, 2)], ids=["api=temporal", "api=ui", "temporal=ui"])
def test_the_same_port_for_two_flags_is_refused_up_front(tmp_path: Path, first: int, second: int) -> None:
    # Each port passes the "is it free" probe on its own; the clash showed only once started. When the
    # API's port was Temporal's or the UI's, uvicorn's sys.exit() hung the shutdown forever, with
    # Temporal and PostgreSQL left running.
    ports = dict(zip(FLAGS, free_ports(3)))
    ports[FLAGS[second]] = ports[FLAGS[first]]
    error = refused_start(tmp_path, ports)
    assert FLAGS[first] in error and FLAGS[second] in error and str(ports[FLAGS[first]]) in error, error


def test_a_second_dev_on_the_same_data_dir_is_refused_naming_the_first(start_dev, tmp_path: Path) -> None:
    first = start_dev(tmp_path / "data")
    assert first.process is not None
    second = Dev(tmp_path, first.data_dir, free_ports(3))
    process = second.start(wait_ready=False).process
    assert process is not None
    try:
        returncode = process.wait(60)
    finally:
        if process.poll() is None:  # Dev.kill would also end the first's PostgreSQL, in the same data dir
            second.kill()

    assert returncode != 0
    lines = second.err_path.read_text().strip().splitlines()
    assert lines == [f"isolator: another isolator dev (pid {first.process.pid}) uses this data dir, "
                     f"{first.data_dir}: stop it first, or give this one another with --data-dir"], second.logs()
    assert httpx.get(f"{first.api}/readyz").status_code == 200, "the first goes on"
