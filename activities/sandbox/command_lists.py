"""A repository's set-up or teardown commands, one after another in one sandbox.

A sandbox costs its making each time (the view, bubblewrap's namespaces, the egress bridge, the
run's cgroup: about 10 ms), so a set-up of several commands pays it once: a small `sh` script runs
each command through a `sh -c` of its own, as CI runs a step, and stops at the first that fails.
Around each it prints a line with a mark of this run's, the command's number and, at its end, its
exit code: the lines tell which command is running, which failed, and what it said last. Each
command's time limit is what is left of the list's.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from activities.sandbox.user_programs import MAX_LINE, TAIL_LINES, CannotStart, Finished, run_user_program

# $1 the mark, then the commands; the output of a command that did not end its last line is ended first.
RUNNER = ('mark=$1; shift; number=0; for command in "$@"; do number=$((number + 1)); '
          'printf "%s start %d\\n" "$mark" "$number"; sh -c "$command"; code=$?; '
          'printf "\\n%s end %d %d\\n" "$mark" "$number" "$code"; '
          '[ "$code" -eq 0 ] || exit "$code"; done')


@dataclass
class ListFinished:
    """How a list ended: `failed` is the index of the command that failed or was stopped (None when
    every one succeeded); `tail`, that command's last lines, or the last command's."""

    exit_code: int | None  # None: stopped at the time limit, or at `limit`
    seconds: float
    failed: int | None = None
    tail: list[str] = field(default_factory=list)
    limit: str | None = None


async def run_user_commands(commands: Sequence[str], cwd: Path, env: dict[str, str], timeout_seconds: float,
                            on_command: Callable[[int], None] | None = None) -> ListFinished:
    """Run `commands` in order in one sandbox; `on_command` hears the index of each as it starts."""
    lines = _MarkedLines(f"isolator-step-{secrets.token_hex(8)}", on_command)
    try:
        finished = await run_user_program(["sh", "-c", RUNNER, "sh", lines.mark, *commands], cwd, env, timeout_seconds,
                                          on_output=lines.add)
    except CannotStart as error:  # as a shell says of a command it cannot run
        return ListFinished(127, 0.0, 0, [str(error)])
    lines.close()
    return _ending(finished, lines)


def _ending(finished: Finished, lines: _MarkedLines) -> ListFinished:
    if finished.exit_code == 0:
        return ListFinished(0, finished.seconds, None, lines.tail())
    failed = lines.current if lines.current is not None else 0
    return ListFinished(finished.exit_code, finished.seconds, failed, lines.tail(), finished.limit)


class _MarkedLines:
    """The runner's output, read as lines: its marks say which command the others belong to."""

    def __init__(self, mark: str, on_command: Callable[[int], None] | None) -> None:
        self.mark, self.on_command = mark, on_command
        self.current: int | None = None
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self.partial = ""

    async def add(self, chunk: bytes) -> None:
        *complete, self.partial = (self.partial + chunk.decode(errors="replace")).split("\n")
        if len(self.partial) > MAX_LINE:  # no newline for a long while: keep its start, drop the rest
            complete.append(self.partial[:MAX_LINE] + " […]")
            self.partial = ""
        for line in complete:
            self._line(line[:MAX_LINE])

    def _line(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word != self.mark:
            self.lines.append(line)
            return
        kind, _, number = rest.partition(" ")
        if kind == "start":
            self.current = int(number) - 1
            self.lines.clear()
            if self.on_command is not None:
                self.on_command(self.current)
        elif self.lines and not self.lines[-1]:  # the end of a command's output, ended by the runner
            self.lines.pop()

    def close(self) -> None:
        if self.partial:
            self._line(self.partial[:MAX_LINE])

    def tail(self) -> list[str]:
        return list(self.lines)
