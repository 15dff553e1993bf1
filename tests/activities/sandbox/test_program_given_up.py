"""A handler of a program's output may give up on it (a budget passed, an agent retrying a failing
API for minutes): the program is stopped then, not when it ends by itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from activities.runs.agents.base import GaveUp
from activities.sandbox import bubblewrap
from activities.sandbox.user_programs import run_user_program


async def test_a_handler_that_gives_up_stops_the_program_and_all_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bubblewrap, "_current", bubblewrap.Sandbox(False, None, "open", (), (), tmp_path))
    groups: list[int] = []

    async def give_up(chunk: bytes) -> None:
        raise GaveUp("enough")

    started = time.monotonic()
    with pytest.raises(GaveUp):
        await run_user_program(["sh", "-c", "echo go; sleep 60 & wait"], tmp_path, dict(os.environ), 120.0,
                               on_output=give_up, on_start=groups.append)
    assert time.monotonic() - started < 10
    with pytest.raises(ProcessLookupError):
        os.killpg(groups[0], 0)
