"""`isolator fake-model` (issue 47, item 17): a scripted model a person runs to try `AGENT=claude` and
approvals without an API key. The command starts, says the variables that point Claude Code at it, and
the real Claude Code (the bundled CLI) answers through it; with the whole service, a call an `ask` rule
names waits for a person, and once allowed the model makes it again."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.agent_clis import claude_binary
from tests.approvals import press, request_of, runs_when_ended, use_approvals
from tests.conftest import Stack, free_port
from tests.dev_process import ISOLATOR
from workers.fake_model.scripted import HELP, ScriptedModel


@pytest.fixture
def fake_model() -> Iterator[tuple[str, subprocess.Popen]]:
    """`isolator fake-model` on a free port: the ANTHROPIC_BASE_URL its banner names, and the process."""
    process = subprocess.Popen([ISOLATOR, "fake-model", "--port", str(free_port())], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        banner = first + "".join(process.stdout.readline() for _ in range(4))
        found = re.search(r"ANTHROPIC_BASE_URL=(http://127\.0\.0\.1:\d+) ", banner)
        assert found and "is listening at" in first, (banner, process.stderr.read() if process.poll() else "")
        assert "AGENT=claude" in banner and "ANTHROPIC_API_KEY=" in banner
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def ask_claude(url: str, message: str, folder: Path) -> str:
    """The bundled Claude Code, headless, in `folder`, pointed at the fake: its final answer."""
    environment = {**os.environ, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "fake-key",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "HOME": str(folder / "home")}
    ran = subprocess.run([str(claude_binary()), "-p", "--output-format", "stream-json", "--verbose",
                          "--allowedTools", "Bash"], input=message, cwd=folder, env=environment,
                         capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    results = [event for event in events if event.get("type") == "result"]
    assert results, (ran.returncode, ran.stdout[-2000:], ran.stderr[-2000:])
    return str(results[-1].get("result"))


def test_the_command_serves_a_model_claude_code_answers_through(
        fake_model: tuple[str, subprocess.Popen], tmp_path: Path) -> None:
    url, process = fake_model
    (tmp_path / "home").mkdir()
    assert ask_claude(url, "hello", tmp_path) == HELP
    answer = ask_claude(url, "run: echo fake-model-works > proof.txt && cat proof.txt", tmp_path)
    assert answer == "Done. It said: fake-model-works", answer
    assert (tmp_path / "proof.txt").read_text() == "fake-model-works\n"

    process.send_signal(signal.SIGINT)
    assert process.wait(15) == 0, process.stderr.read()


def test_a_port_in_use_is_said_in_one_line_naming_the_flag() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = subprocess.run([ISOLATOR, "fake-model", "--port", str(port)], capture_output=True, text=True,
                                 timeout=60)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"isolator: the fake model cannot listen on 127.0.0.1:{port} (Address already in use): choose another "
        "port with --port"], refused.stderr


async def test_with_the_service_a_call_waits_for_a_yes_and_is_made_once_allowed(
        stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedModel()
    url = await model.start()
    try:
        for name, value in (("ANTHROPIC_BASE_URL", url), ("ANTHROPIC_API_KEY", "fake-key"),
                            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")):
            monkeypatch.setenv(name, value)  # as the banner says
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        use_approvals(stack, "ask: Bash(touch:*)")
        await stack.register(repo)
        talk = f"fake-model-{uuid.uuid4().hex[:6]}"
        first = (await stack.say(talk, "run: touch hello.txt", user="alice"))["result"]
        asked = await request_of(stack, talk)
        assert "touch hello.txt" in asked["text"]
        assert not (Path(first["workingPath"]) / "hello.txt").exists(), "it waits for a yes"
        assert (await press(stack, asked["code"], "once", user="alice"))[0] == 200
        runs = await runs_when_ended(stack, talk, 2)
        assert [item["status"] for item in runs] == ["waiting", "done"]
        assert (Path(first["workingPath"]) / "hello.txt").exists(), "allowed, the model made the call again"
        assert any("Done." in reply for reply in await stack.replies(talk))
    finally:
        await model.stop()
