"""Small real agent programs for the tests: each reads the message on standard input, as a coding
agent does, and does one thing worth checking."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

HERE = Path(__file__).parent


def command(name: str, *args: str) -> str:
    """AGENT_COMMAND for the agent `name` (a script in this folder), run by this Python."""
    return shlex.join([sys.executable, str(HERE / f"{name}.py"), *args])
