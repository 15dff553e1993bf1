"""`make soak`'s report: each fault test, how many rounds it ran, and what was lost or duplicated.

Loaded with `-p tests.faults.soak_report`. Every round of a fault test asserts that nothing was lost
(a message without its worktree, row or reply, a removal half done) and nothing duplicated (two
worktrees, rows, replies, workflows or runs for one thing): a passed test is zero of each, and a
failed one names what it found in its failure.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))
_results: list[tuple[str, str, float]] = []
_rounds: dict[str, int] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test module that reads ISOLATOR_SOAK_ROUNDS (its `ROUNDS`) repeats its fault; others run once."""
    for item in items:
        _rounds[item.nodeid] = getattr(getattr(item, "module", None), "ROUNDS", 1)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _results.append((report.nodeid, report.outcome, report.duration))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.section(f"soak: {ROUNDS} rounds of each fault (a test that does not repeat says 1)")
    width = max((len(nodeid) for nodeid, _, _ in _results), default=10)
    terminalreporter.write_line(f"{'fault test'.ljust(width)}  rounds  lost  duplicated  result   minutes")
    for nodeid, outcome, seconds in _results:
        clean = "0" if outcome == "passed" else "see failure"
        terminalreporter.write_line(
            f"{nodeid.ljust(width)}  {_rounds.get(nodeid, 1):>6}  {clean:>4}  {clean:>10}  {outcome:<7}  {seconds / 60:7.1f}")
