"""Stubs of activities/chat/conversations.py: the conversation rows (local activities)."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.environment import MoveConversationInput
from isolator.contracts.message import (
    CloseInput,
    Conversation,
    ConversationInput,
    ConversationMoved,
    LinkCodebaseInput,
)
from workflows.steps.options import LOCAL_OPTIONS


async def record_conversation(request: ConversationInput) -> Conversation:
    return await workflow.execute_local_activity("record_conversation", request, result_type=Conversation, **LOCAL_OPTIONS)


async def link_conversation_codebase(link: LinkCodebaseInput) -> None:
    await workflow.execute_local_activity("link_conversation_codebase", link, **LOCAL_OPTIONS)


async def close_conversation(request: CloseInput) -> str | None:
    """Returns the closed conversation's environment id, if it has one."""
    return await workflow.execute_local_activity(
        "close_conversation", request, result_type=str | None, **LOCAL_OPTIONS
    )


async def move_conversation(request: MoveConversationInput) -> ConversationMoved | None:
    """None in the histories of runs from before it said what it left behind."""
    return await workflow.execute_local_activity(
        "move_conversation", request, result_type=ConversationMoved | None, **LOCAL_OPTIONS)
