"""What a run's agent shows while it works, and the tasks around it: its standard error kept with its
last lines for the summary, the working line after a silence, the record flushed as it goes."""

from __future__ import annotations

import asyncio
import codecs
import time
from collections import deque
from typing import Any, Coroutine

from activities.runs.answer import AnswerStream
from activities.runs.records import FLUSH_SECONDS, Capture

LOG_TAIL_LINES = 10
LOG_TAIL_CHARS = 300  # of each line shown on failure
WORKING_AFTER = 10.0  # seconds of silence before the working line shows
PANIC = "' panicked at "  # Rust's (`thread 'main' panicked at src/x.rs:1:2:`); its message follows
CRASH_LINES = 4


class Silence:
    """The working line: shown once the agent has shown nothing for WORKING_AFTER seconds, with the
    time it has worked, and gone with its next line."""

    def __init__(self, answer: AnswerStream) -> None:
        self.answer = answer
        self.started = self.last = time.monotonic()

    def spoke(self) -> None:
        self.last = time.monotonic()
        self.answer.working("")

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            if now - self.last >= WORKING_AFTER:
                self.answer.working(f"⏳ _Working… {int(now - self.started)} s so far._")


class RunLog:
    """Standard error: kept with the run, its last lines shown when the run fails."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self.head: list[str] = []  # the first lines: an agent's error may come before a long backtrace
        self.crash: list[str] = []  # a panic's line and the message after it, wherever it came
        self.partial = ""

    async def add(self, chunk: bytes) -> None:
        text = self.decoder.decode(chunk)
        *lines, self.partial = (self.partial + text).split("\n")
        self.partial = self.partial[-LOG_TAIL_CHARS:]
        self.tail.extend(line[:LOG_TAIL_CHARS] for line in lines)
        self.head.extend(line[:LOG_TAIL_CHARS] for line in lines[:LOG_TAIL_LINES - len(self.head)])
        for line in lines:
            if PANIC in line:
                self.crash = []
            if PANIC in line or 0 < len(self.crash) < CRASH_LINES:
                self.crash.append(line[:LOG_TAIL_CHARS])
        await self.capture.add(text)

    def last_lines(self) -> list[str]:
        return [*self.tail, self.partial] if self.partial else list(self.tail)

    def new_turn(self) -> None:
        """What a turn's agent says of itself is read from its own lines only (the log keeps all)."""
        self.tail.clear()
        self.head.clear()
        self.crash.clear()
        self.partial = ""

    def telling_lines(self) -> list[str]:
        """The first and the last lines, where agents say what went wrong."""
        return [*self.head, *self.crash, *self.last_lines()]


async def keep_flushing(*captures: Capture) -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        for capture in captures:
            await capture.flush()


async def to_its_end(work: Coroutine[Any, Any, None]) -> None:
    """Await `work` to its end even when this task is cancelled meanwhile; that cancel is dropped."""
    task = asyncio.ensure_future(work)
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
    task.result()


async def stop_tasks(*tasks: asyncio.Task) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
