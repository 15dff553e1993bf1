"""The cleanup schedule's handle, for the tests in this folder; the history captures, run only when asked."""

import os

import pytest

from tests.schedules import schedule  # noqa: F401  (fixture)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The captures of tests/workflows/test_replay.py rewrite tests/histories/: a tool, not a test, they are
    left out (not skipped) unless ISOLATOR_CAPTURE_HISTORIES=1."""
    if os.environ.get("ISOLATOR_CAPTURE_HISTORIES") == "1":
        return
    captures = [item for item in items if item.get_closest_marker("capture")]
    if captures:
        config.hook.pytest_deselected(items=captures)
        items[:] = [item for item in items if not item.get_closest_marker("capture")]
