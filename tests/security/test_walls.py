"""The walls (issue "Walls", rows 1-6 of its red-team table): an attacker run by the service as any
agent is, on real git, PostgreSQL, Temporal and bubblewrap, as root (as CI runs). It cannot gain a
capability, mount or unmount (rows 1-3); reach the service's API, Temporal or any other port of the
host's loopback, nor cloud metadata, nor a host off the list, while the listed model API answers (rows
5-6); and nothing it plants in its worktree for git runs outside the sandbox afterwards, whatever the
service does with that worktree: `/status`, `/worktree why`, the dashboard, a cleanup dry run, a
removal with its archive, a restore, a results push (row 4)."""

from __future__ import annotations

import http.server
import json
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

from activities.results.commit_and_push import push_branch
from activities.sandbox import bubblewrap
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack, free_port
from tests.dashboard.browser import served
from tests.gitrepos import git, make_repo
from workers.temporal_server import TemporalDevServer

MODEL_ANSWER = "the listed model API answers"


@pytest.fixture
def place() -> Iterator[Path]:
    """Out of the test's tmp_path (writable in the sandbox for other tests) and out of /tmp (the
    sandbox's own): here the markers' folder is read-only to the run."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="isolator-walls-"))
    (folder / "markers").mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def model_api() -> Iterator[str]:
    """A stand-in for a model API on the host's loopback, listed in SANDBOX_ALLOWED_HOSTS."""
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(MODEL_ANSWER.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/models"
    server.shutdown()


@pytest.fixture
def project(stack: Stack, place: Path) -> Path:
    repo = make_repo(place / "repos" / "project")
    git("clone", "-q", "--bare", str(repo), str(place / "origin.git"), cwd=place)
    git("remote", "add", "origin", str(place / "origin.git"), cwd=repo)
    other = stack.settings.worktree_base / "project" / "other"
    git("worktree", "add", "-q", str(other), "-b", "other-branch", cwd=repo)
    (other / "secret.txt").write_text("another conversation's work\n")
    stack.settings.data_dir.mkdir(parents=True, exist_ok=True)
    (stack.settings.data_dir / "secret.txt").write_text("the service's data\n")
    return repo


def markers(place: Path) -> list[str]:
    return sorted(os.listdir(place / "markers"))


async def test_an_attacker_in_a_run_escapes_nothing_and_its_plants_never_run_outside(
    stack: Stack, project: Path, place: Path, model_api: str, temporal_server: TemporalDevServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="activities.sandbox.egress_proxy")
    other_port = free_port()
    async with served(stack) as api_url:
        stack.settings.sandbox_allowed_hosts = model_api.split("/")[2]
        bubblewrap.configure(stack.settings)
        stack.settings.agent_command_line = command("attacker", json.dumps({
            "worker_pid": os.getpid(), "data_dir": str(stack.settings.data_dir),
            "worktree_base": str(stack.settings.worktree_base),
            "other_secret": str(stack.settings.worktree_base / "project" / "other" / "secret.txt"),
            "outside_file": str(place / "outside.txt"), "markers": str(place / "markers"),
            "loopback_ports": {"API": int(api_url.rsplit(":", 1)[1]),
                               "Temporal": int(temporal_server.address.rsplit(":", 1)[1]),
                               "other port": other_port},
            "model_api": model_api, "refused_host": "refused.example"}))
        await stack.register(project)
        created = (await stack.say("attacker-1", "do your worst"))["result"]
        run = await finished_run(stack, created["agentRunId"])

    assert run["status"] == "done", run
    worktree = Path(created["workingPath"])
    report = json.loads((worktree / "attack-report.json").read_text())
    assert report["capabilities"] == "succeeded: 'CapEff:\\t0000000000000000 CapBnd:\\t0000000000000000'", report
    for escape in ("remount / writable, then write outside", "unmount /proc, then read the worker's environment",
                   "unmount the data folder, then read it", "unmount the worktrees, then read another's file",
                   "connect to the host's API", "connect to the host's Temporal", "connect to the host's other port"):
        assert report[escape].startswith("failed"), f"{escape}: {report[escape]}"
    for asked in ("ask the proxy for the host's API", "ask the proxy for the host's Temporal",
                  "ask the proxy for the host's other port", "ask the proxy for cloud metadata",
                  "reach a host not on the list"):
        assert report[asked].startswith("failed: OSError: HTTP 403: isolator's sandbox refused"), report[asked]
    assert report["reach the model API"] == f"succeeded: {MODEL_ANSWER!r}"
    assert not (place / "outside.txt").exists()
    assert "sandbox egress refused refused.example:80" in caplog.text
    assert report["plant programs for the service's git"] == "succeeded: None", report
    assert git("ls-tree", created["branch"], "nested", cwd=project).startswith("160000 commit")
    assert markers(place) == [], "the attacker's own git inside ran nothing it could record"

    # Everything the service does with the planted worktree afterwards.
    replies = [(await stack.say("attacker-1", "/status"))["result"]["replies"][0]]
    replies.append((await stack.say("attacker-1", f"/worktree why {created['branch']}"))["result"]["replies"][0])
    assert "Sandbox: on, network: egress" in replies[0], replies[0]
    page = await stack.api.get(f"/environments/{created['environmentId']}")
    assert page.status_code == 200, page.text
    replies.append((await stack.say("attacker-1", "/worktree cleanup stale --dry-run"))["result"]["replies"][0])
    assert markers(place) == [], replies
    removed = (await stack.say("attacker-1", "/worktree remove --force"))["result"]["replies"]
    assert removed[0].startswith("Removed worktree"), removed
    restored = (await stack.say("attacker-1", f"/worktree restore {created['branch']}"))["result"]["replies"]
    assert restored[0].startswith("Restored"), restored
    pushed = await push_branch(worktree, created["branch"], created["branch"], None)
    assert pushed.ok, pushed.reason
    assert markers(place) == [], "a program planted by the run ran outside the sandbox"
