"""The agent's answer in the conversation, as it is written.

The first output is posted at once; after that one message is updated in place, at most once per
the platform's interval, and the answer goes on in a new message past the platform's length limit.
Only the message being written is held in memory; past MAX_MESSAGES the rest of a long answer is
left to the run's record, and the last message says where to read it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

from temporalio.exceptions import ApplicationError

from activities.runs.verbosity import steps_view
from isolator.contracts.message import ReplyInput

log = logging.getLogger(__name__)

# Characters per message, each platform's own limit; the answer leaves room for the closing summary.
PLATFORM_LIMITS = {"github": 65536, "slack": 4000, "telegram": 4096, "discord": 2000}
DEFAULT_PLATFORM_LIMIT = 4000
SUMMARY_ROOM = 600
# Seconds between updates of one message. GitHub counts every edit against a secondary rate limit.
UPDATE_INTERVALS = {"github": 5.0}
DEFAULT_UPDATE_INTERVAL = 1.0
FIRST_OUTPUT_GATHER_SECONDS = 0.1  # the first post waits this long for the rest of the first lines
MAX_MESSAGES = 20
FINAL_ATTEMPTS = 8  # about two minutes of a platform being away (an outage; a refusal is not retried)

Say = Callable[[ReplyInput], Awaitable[None]]


class AnswerStream:
    def __init__(self, say: Say, platform: str, conversation_id: str, run_id: str, steps_only: bool = False) -> None:
        self.say, self.platform, self.conversation_id, self.run_id = say, platform, conversation_id, run_id
        self.steps_only = steps_only  # the platform shows the agent's steps, not its running lines
        self.steps_text = ""  # that list of steps, shown below the current message
        self.platform_limit = PLATFORM_LIMITS.get(platform, DEFAULT_PLATFORM_LIMIT)
        self.limit = self.platform_limit - SUMMARY_ROOM
        self.interval = UPDATE_INTERVALS.get(platform, DEFAULT_UPDATE_INTERVAL)
        self.current = ""  # the message being written
        self.index = 0  # its number
        self.full: list[tuple[int, str]] = []  # messages past their limit, their last update not yet sent
        self.posted: set[int] = set()
        self.shown = ""  # the text of the current message as last sent
        self.beyond = 0  # characters past MAX_MESSAGES, not posted
        self.last_full: tuple[int, str] = (0, "")  # the last message sent in full: past MAX_MESSAGES, it ends the answer
        self.status = ""  # the working line, shown below the current message while the agent is silent
        self.arrived = asyncio.Event()
        self._lock = asyncio.Lock()

    def working(self, line: str) -> None:
        """Show `line` below the answer (empty: none), updated in place; no text of the answer."""
        if line != self.status:
            self.status = line
            self.arrived.set()

    def steps(self, steps: list[str]) -> None:
        """Show the agent's steps so far below the answer, updated in place (see activities/runs/verbosity.py)."""
        text = steps_view(steps)
        if text != self.steps_text:
            self.steps_text = text
            self.arrived.set()

    def replace(self, text: str) -> None:
        """The message being written becomes `text` (the final answer in place of the progress lines)."""
        self.current, self.status, self.steps_text = "", "", ""
        self.add(text)

    def add(self, text: str) -> None:
        if self.index >= MAX_MESSAGES:
            self.beyond += len(text)
            return
        self.current += text
        while len(self.current) > self.limit and self.index < MAX_MESSAGES:
            cut = self.current.rfind("\n", 0, self.limit)
            if cut < self.limit // 2:  # no line break near the end: cut mid-line
                cut = self.limit
            self.full.append((self.index, self.current[:cut]))
            self.current = self.current[cut:].lstrip("\n")
            self.index += 1
            self.shown = ""
        if self.index >= MAX_MESSAGES:
            self.beyond += len(self.current)
            self.current = ""
        self.arrived.set()

    async def keep_posting(self) -> None:
        """Until cancelled: the first output at once, then updates at the platform's pace."""
        await self.arrived.wait()
        await asyncio.sleep(FIRST_OUTPUT_GATHER_SECONDS)
        while True:
            # A send cut halfway (the platform took the post, its record not yet written) would leave the
            # message unknown to this stream: the end's update would then be taken for that post again and
            # dropped. So a send in flight finishes; `finish` waits for it (the lock) and updates the message.
            await asyncio.shield(self.flush())
            await asyncio.sleep(self.interval)

    async def flush(self) -> None:
        """Send what changed; a platform that fails now is tried again at the next tick."""
        async with self._lock:
            try:
                while self.full:
                    index, text = self.full[0]
                    await self._send(index, text)
                    self.last_full = self.full.pop(0)
                text = self.current
                if self.steps_text or self.status:
                    text = "\n\n".join(part for part in (self.current.rstrip(), self.steps_text, self.status) if part)
                if text.strip() and text != self.shown:
                    await self._send(self.index, text)
                    self.shown = text
            except Exception as error:  # noqa: BLE001 - the run goes on; the next tick tries again
                log.warning("answer of run %s not delivered yet: %s", self.run_id, error)

    async def finish(self, summary: str, more: str) -> None:
        """The last update: what is left of the answer, then how the run ended (`summary`); `more`
        says where the rest of an answer too long for the conversation is."""
        if self.beyond:
            summary = f"{summary}\n{more}"
        if len(summary) > SUMMARY_ROOM:
            summary = summary[:SUMMARY_ROOM - 2] + " …"
        self.status = ""
        await self.flush()
        async with self._lock:
            text, index = summary, self.index
            if self.current.strip():
                text = f"{self.current.rstrip()}\n\n{summary}"
            elif self.index >= MAX_MESSAGES:  # no more messages: the last one ends with the summary
                index, last = self.last_full
                text = f"{last.rstrip()}\n\n{summary}"
            for attempt in range(FINAL_ATTEMPTS):
                try:
                    await self._send(index, text)
                    return
                except ApplicationError as error:
                    if error.non_retryable:  # the platform refused it: asking again changes nothing
                        log.warning("end of run %s refused: %s", self.run_id, error)
                        return
                    log.warning("end of run %s not delivered (attempt %d): %s", self.run_id, attempt + 1, error)
                except Exception as error:  # noqa: BLE001 - the record keeps the answer whatever happens here
                    log.warning("end of run %s not delivered (attempt %d): %s", self.run_id, attempt + 1, error)
                if attempt + 1 < FINAL_ATTEMPTS:
                    await asyncio.sleep(min(2.0 ** attempt, 30.0))

    async def _send(self, index: int, text: str) -> None:
        key = f"agent-run:{self.run_id}:{index}"
        if index in self.posted:
            await self.say(ReplyInput(self.platform, self.conversation_id, text, f"{key}:update", updates=key))
        else:
            await self.say(ReplyInput(self.platform, self.conversation_id, text, key))
            self.posted.add(index)
