"""A MessageWorkflow that reads the wall clock, which no workflow may do: for tests/test_replay.py.

It lives apart from the test module because the sandbox imports a workflow's module inside itself,
and the test module would bring the whole test stack with it.
"""

from __future__ import annotations

import time

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.message import MessageInput, Resolution
    from workflows.message import MessageWorkflow


@workflow.defn(name="MessageWorkflow")
class ClockReadingMessageWorkflow(MessageWorkflow):
    @workflow.run
    async def run(self, message: MessageInput) -> Resolution:
        workflow.logger.debug("started at %s", time.time())  # not deterministic: the sandbox refuses it
        return await super().run(message)
