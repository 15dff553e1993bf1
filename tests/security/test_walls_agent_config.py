"""The agent's configuration is the operator's (issue "Walls, second round"): Codex's `config.toml`
is bound read-only into a folder of the conversation's own, which the run may write; the run can
neither rewrite nor remove it there, nor reach the operator's folder itself, nor another
conversation's folder. Real git, PostgreSQL, Temporal and bubblewrap."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.agent_runs import finished_run
from tests.conftest import Stack

AGENT = Path(__file__).parents[1] / "agents" / "config_writer.py"
CONFIG = '[model_providers.fake]\nname = "fake"\nbase_url = "http://127.0.0.1:9/v1"\n'


@pytest.fixture
def operators_codex_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="isolator-operator-")) / "codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG)
    monkeypatch.setenv("CODEX_HOME", str(folder))
    yield folder
    shutil.rmtree(folder.parent, ignore_errors=True)


async def test_a_run_cannot_rewrite_its_agents_configuration(
        stack: Stack, repo: Path, operators_codex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFIG_WRITER_TARGETS", str(operators_codex_home / "config.toml"))
    stack.settings.agent_driver, stack.settings.agent_executable = "codex", str(AGENT)
    stack.settings.sandbox_readable_paths = ":".join([sys.prefix, sys.base_prefix, str(AGENT)])
    await stack.register(repo)

    reports = []
    for conversation in ("config-1", "config-2"):
        created = (await stack.say(conversation, "rewrite your configuration"))["result"]
        run = await finished_run(stack, created["agentRunId"])
        assert (Path(created["workingPath"]) / "config-report.json").exists(), (run, await stack.replies(conversation))
        reports.append(json.loads((Path(created["workingPath"]) / "config-report.json").read_text()))

    for report in reports:
        assert report["read its configuration"] == f"succeeded: {CONFIG!r}"
        assert report["rewrite its configuration"].startswith("failed: OSError: [Errno 30] Read-only"), report
        assert report["remove its configuration"].startswith("failed"), report
        assert report[f"rewrite {operators_codex_home / 'config.toml'}"].startswith("failed"), report
        assert report["write its own session"] == "succeeded: 4"
    assert (operators_codex_home / "config.toml").read_text() == CONFIG
    folders = sorted(stack.settings.agent_sessions_dir.glob("*/codex/sessions.txt"))
    assert len(folders) == 2, "each conversation wrote in a folder of its own"
