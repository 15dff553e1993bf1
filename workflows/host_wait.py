"""A message whose codebase's host has no worker: told within seconds, then waiting durably.

Before the decision order touches the codebase's host, a message for a codebase held by another host
asks that host's queue for a step that does nothing (`host_answers`, 3 s to be taken). A silent host:
the user is told once, and the workflow waits on timers, looking (a local activity) at the host's
liveness (its workers' rows, activities/hosts/liveness.py); alive, it asks the host once more and goes on. Nothing stays on the host's queue
meanwhile. Past HOST_WAIT_HOURS the message is answered that it was not run. A command does not wait:
`/status` answers from the database and says the host is silent.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Awaitable, Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.host_wait import HostSeen
    from isolator.contracts.message import Conversation, Resolution
    from workflows.chat import host_texts
    from workflows.steps import versions
    from workflows.steps.codebases import host_waits

FIRST_LOOK = timedelta(seconds=1)
# The looks space out, so that a wait of HOST_WAIT_HOURS keeps its history to some 1,500 looks.
LOOKS_IN_A_WAIT = 1500
SHORTEST_SPACING = timedelta(seconds=30)


class HostGate:
    def __init__(self, reply: Callable[[str], Awaitable[None]]) -> None:
        self._reply = reply
        self._asked = False
        self._seen: HostSeen | None = None  # what the database said of the host, once it did not answer

    async def wait(self, conversation: Conversation, codebase: Codebase, command: object | None) -> Resolution | None:
        """None when the host answers (now or after a wait); otherwise what the message comes to."""
        if not await self._silent(conversation, codebase):
            return None
        if command is not None:  # a command only looks: answered now, from the database
            return Resolution(outcome="command")
        seen = self._seen
        assert seen is not None
        await self._reply(host_texts.waiting(codebase.name, codebase.host, seen.last_seen_text))
        if await _until_back(codebase.host, seen.wait_hours):
            return None
        await self._reply(host_texts.not_run(codebase.name, codebase.host, seen.wait_hours))
        return Resolution(outcome="host_gone")

    async def before_command(self, command: str, conversation: Conversation) -> None:
        """`/status` in a conversation that has its worktree: is the host there to count it?"""
        if command == "status" and conversation.codebase is not None:
            await self._silent(conversation, conversation.codebase)

    async def _silent(self, conversation: Conversation, codebase: Codebase) -> bool:
        if self._asked or conversation.codebase_here is not False or not versions.waits_for_host():
            return conversation.host_silence is not None
        self._asked = True
        if await host_waits.host_answers(codebase.host):
            return False
        self._seen = seen = await host_waits.host_seen(codebase.host)
        conversation.host_silence = host_texts.status_line(codebase.name, codebase.host, seen.last_seen_text)
        return True


async def _until_back(host: str, wait_hours: float) -> bool:
    """Durable: timers and looks; True once a worker of the host is alive again and takes a step."""
    deadline = workflow.now() + timedelta(hours=wait_hours)
    longest = max(SHORTEST_SPACING, timedelta(hours=wait_hours) / LOOKS_IN_A_WAIT)
    spacing = FIRST_LOOK
    while workflow.now() < deadline:
        await workflow.sleep(min(spacing, deadline - workflow.now()))
        spacing = min(spacing * 1.5, longest)
        seen = await host_waits.host_seen(host)
        if seen.alive and await host_waits.host_answers(host):
            return True
    return False
