"""The test adapter: a chat platform driven over HTTP, for manual and automated end-to-end flows."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ConfigDict, Field, field_validator
from temporalio.client import Client

from api.deps import get_client, get_pool, get_settings, require_api_token
from api.dispatch import start_message
from isolator.settings import Settings

PLATFORM = "test"
# It starts agents without the platforms' allow rules: with API_TOKEN set, only for its holder.
router = APIRouter(prefix="/test", tags=["test adapter"], dependencies=[Depends(require_api_token)])

ConversationId = Annotated[str, Path(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]


class InboundTestMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    conversation_id: str = Field(alias="conversationId", min_length=1, max_length=256)
    message: str = Field(min_length=1, max_length=65536)
    # A delivery key; send the same one twice to simulate a redelivered webhook.
    message_id: str | None = Field(None, alias="messageId", min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    # Who sends it: the one who may answer what its run asks (`POST /test/approvals/<code>`).
    user: str = Field("tester", min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._@-]+$")

    @field_validator("conversation_id")
    @classmethod
    def _printable(cls, value: str) -> str:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("message")
    @classmethod
    def _storable(cls, value: str) -> str:
        if "\x00" in value:  # PostgreSQL text cannot hold it, and replies quote the message
            raise ValueError("must not contain NUL characters")
        if not value.strip():  # refused as "" is: it would start an agent's run with nothing to do
            raise ValueError("must not be blank: write what the agent should do, or a command such as `/help`")
        return value


@router.post("/message")
async def post_message(
    body: InboundTestMessage,
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
    wait: bool = False,
) -> dict[str, Any]:
    handle = await start_message(
        settings,
        client,
        platform=PLATFORM,
        conversation_id=body.conversation_id,
        text=body.message,
        message_key=body.message_id or uuid.uuid4().hex,
        user=body.user,
    )
    answer: dict[str, Any] = {
        "success": True,
        "conversationId": body.conversation_id,
        "message": body.message,
        "workflowId": handle.id,
        "runId": handle.result_run_id,
    }
    if wait:
        resolution = await handle.result()
        answer["result"] = {
            "outcome": resolution.outcome,
            "workingPath": resolution.working_path,
            "branch": resolution.branch,
            "environmentId": resolution.environment_id,
            "agentRunId": resolution.run_id,
            "replies": resolution.replies,
        }
    return answer


@router.get("/messages/{conversation_id:path}")  # a conversation id may hold `/`
async def get_messages(
    conversation_id: ConversationId, pool: Annotated[asyncpg.Pool, Depends(get_pool)]
) -> dict[str, Any]:
    rows = await pool.fetch(
        """SELECT body, buttons, created_at FROM outbound_messages
           WHERE platform = $1 AND platform_conversation_id = $2 AND status = 'sent' ORDER BY id""",
        PLATFORM, conversation_id,
    )
    return {
        "conversationId": conversation_id,
        # A request's answers as buttons: press one with `POST /test/approvals/<code>`.
        "messages": [{"message": row["body"], "timestamp": row["created_at"].isoformat(),
                      **({"buttons": row["buttons"]} if row["buttons"] else {})} for row in rows],
    }


@router.delete("/messages/{conversation_id:path}")
async def clear_messages(
    conversation_id: ConversationId, pool: Annotated[asyncpg.Pool, Depends(get_pool)]
) -> dict[str, Any]:
    await pool.execute(
        "DELETE FROM outbound_messages WHERE platform = $1 AND platform_conversation_id = $2",
        PLATFORM, conversation_id,
    )
    return {"conversationId": conversation_id, "cleared": True}
