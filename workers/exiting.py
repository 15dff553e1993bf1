"""How an `isolator` process ends: its own clean-up done, it leaves without the interpreter's teardown.

Temporal's SDK runs a Rust runtime in threads of its own, which call into Python whenever an RPC or a
poll ends, one that a shutdown abandoned included. When that happens while the interpreter finalizes,
CPython fails ("PyGILState_Release: thread state ... must be current", "Python runtime state:
finalizing") and the process aborts: SIGABRT, exit code -6, as `isolator worker` did on its stop on a
busy machine. So each command closes what it owns itself (workers, pools, servers, child processes),
then `leave` runs the exit handlers, flushes the output and ends the process with `os._exit`: no
teardown is left for those threads to meet.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    atexit._run_exitfuncs()  # what a normal exit runs first (logging's flush among them)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader went away: nothing more can be said there
            pass
    os._exit(code)


def exit_code(exit: SystemExit) -> int:
    """The status `sys.exit(code)` asks for; a text is said on standard error, as Python does."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1
