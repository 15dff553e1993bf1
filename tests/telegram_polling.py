"""Helpers of the polling tests: waiting for what the poller does, and updates in chats of their own."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Callable

from tests.conftest import Stack
from tests.platforms.telegram import PRIVATE, _update_ids, message, resolution, started


async def until(holds: Callable[[], bool], seconds: float = 60) -> None:
    for _ in range(int(seconds * 20)):
        if holds():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time")


async def handled(stack: Stack, update_id: int) -> None:
    for _ in range(600):
        if await started(stack, update_id):
            await resolution(stack, update_id)
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"update {update_id} was not started")


def update_in_new_chat(text: str) -> tuple[int, dict[str, Any]]:
    chat = {**PRIVATE, "id": uuid.uuid4().int % 10**9}
    update_id = next(_update_ids)
    return chat["id"], {"update_id": update_id, "message": message(text, chat)}
