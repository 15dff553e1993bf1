"""`isolator --help` reads as a command line's help: options with their meaning, not Python types."""

from __future__ import annotations

import subprocess

import pytest

from tests.dev_process import ISOLATOR


@pytest.mark.parametrize("command", [[], ["dev"], ["api"], ["worker"]], ids=["isolator", "dev", "api", "worker"])
def test_help_shows_no_python_type_labels(command: list[str]) -> None:
    shown = subprocess.run([ISOLATOR, *command, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    for label in ("<bool>", "<int>", "<path>", "<str>", "<text>"):
        assert label not in shown.stdout, shown.stdout
    if command == ["dev"]:
        assert "--api-port PORT" in shown.stdout and "--data-dir FOLDER" in shown.stdout
