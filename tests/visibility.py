"""Finding workflows through Temporal's visibility API, as the Temporal UI does."""

from __future__ import annotations

import asyncio

from temporalio.client import Client


async def found(client: Client, query: str, workflow_id: str, seconds: float = 20) -> bool:
    """Whether `query` lists the workflow; visibility trails the history by a moment."""
    for _ in range(int(seconds * 10)):
        if any([execution.id async for execution in client.list_workflows(query) if execution.id == workflow_id]):
            return True
        await asyncio.sleep(0.1)
    return False
