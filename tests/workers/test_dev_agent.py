"""Which agent answers under `isolator dev` (issue 31): the example agent by default, as under `make dev`;
none when AGENT_COMMAND is empty, and then the banner and the conversation say so, once. `make dev`
passes ARGS on as the command's flags."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx

from tests.agent_runs import ENDED
from tests.dev_process import say
from tests.gitrepos import make_repo
from activities.runs.agents import EXAMPLE_AGENT

ROOT = Path(__file__).resolve().parents[2]


def banner(dev) -> dict[str, str]:
    pairs = (line.split(":", 1) for line in dev.stdout().splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def replies_when(dev, conversation: str, ready, seconds: float = 60) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:
        texts = [item["message"] for item in httpx.get(f"{dev.api}/test/messages/{conversation}").json()["messages"]]
        if ready(texts) or time.monotonic() > deadline:
            return texts
        time.sleep(0.2)


def run_ended(dev, run_id: str, seconds: float = 60) -> str:
    """The run's status once it has ended (or as it is when `seconds` have passed)."""
    deadline = time.monotonic() + seconds
    while True:
        status = httpx.get(f"{dev.api}/api/runs/{run_id}").json()["status"]
        if status in ENDED or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def test_isolator_dev_runs_the_example_agent_by_default_and_names_it(start_dev, tmp_path: Path) -> None:
    dev = start_dev(tmp_path / "data")
    assert banner(dev)["Agent"].startswith(f"the example agent, {EXAMPLE_AGENT}"), dev.stdout()
    httpx.post(f"{dev.api}/api/codebases", json={"path": str(make_repo(tmp_path / "repos" / "demo"))}, timeout=60)

    first = say(dev, "dev-agent-1", "hello")
    assert first["result"]["agentRunId"] is not None, first
    # The run's end, not its progress line (which names NOTES.md as it is written): its turn counts then.
    assert run_ended(dev, first["result"]["agentRunId"]) == "done"
    replies = replies_when(dev, "dev-agent-1", lambda texts: any("I took a note" in text for text in texts))
    assert any("I took a note of your message in NOTES.md." in text for text in replies), replies
    status = say(dev, "dev-agent-1", "/status")["result"]["replies"][0]
    assert "Agent session (the example agent): 1 turn" in status, "not claude: no Claude answered"


def test_with_an_empty_agent_command_the_banner_and_the_conversation_say_isolation_only(
        start_dev, tmp_path: Path) -> None:
    dev = start_dev(tmp_path / "data", env={"AGENT_COMMAND": ""})
    assert banner(dev)["Agent"].startswith("none, isolation only"), dev.stdout()
    httpx.post(f"{dev.api}/api/codebases", json={"path": str(make_repo(tmp_path / "repos" / "demo"))}, timeout=60)

    # At once, on the first message, after the worktree's line: a newcomer learns that no answer comes.
    first = say(dev, "dev-agent-2", "hello")
    assert first["result"]["agentRunId"] is None
    (worktree, notice) = first["result"]["replies"]
    assert worktree.startswith("Working in isolated branch"), first
    assert notice == (
        "No coding agent answers in this conversation: messages get their own worktree, and no answer. Start the "
        "service with one (`AGENT=claude`, `AGENT=codex`, or your own program in AGENT_COMMAND), or set the "
        "codebase's `agent_command`, to have it work on them. (Said once per conversation.)")
    second = say(dev, "dev-agent-2", "are you there?")
    assert second["result"]["agentRunId"] is None
    assert second["result"]["replies"] == [], "said once"


def test_make_dev_passes_args_as_flags() -> None:
    for extra, expected in ((["ARGS=--api-port 18000"], "isolator dev --api-port 18000"), ([], "isolator dev")):
        shown = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "dev", *extra],
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.splitlines()[-1].strip().endswith(expected), shown.stdout
