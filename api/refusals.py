"""`GET /api/refusals`: the messages the platforms' allow rules refused (isolator/trust.py), newest first.

Read from Temporal's visibility, as the UI finds them (`IsolatorOutcome = 'refused'`): a refused
message is a MessageWorkflow whose memo holds who sent it and the reply naming what would allow them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel
from temporalio.client import Client

from api.deps import get_client, require_api_token
from isolator.contracts import search_attributes

router = APIRouter(prefix="/api/refusals", tags=["trust"], dependencies=[Depends(require_api_token)])

_QUERY = "WorkflowType = 'MessageWorkflow' AND IsolatorOutcome = 'refused'"


class Refusal(BaseModel):
    workflow_id: str
    platform: str | None
    conversation_id: str | None
    started_at: str
    sender: str | None  # who, in the platform's words
    reason: str | None  # the reply, naming what would allow them


@router.get("")
async def list_refusals(
    client: Annotated[Client, Depends(get_client)],
    platform: Literal["github", "slack", "telegram", "discord"] | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, list[Refusal]]:
    query = _QUERY + (f" AND IsolatorPlatform = '{platform}'" if platform else "")  # one of four fixed names
    refusals = []
    async for execution in client.list_workflows(query, limit=limit):
        attributes = execution.typed_search_attributes
        memo = await execution.memo()
        refusals.append(Refusal(
            workflow_id=execution.id,
            platform=attributes.get(search_attributes.PLATFORM),
            conversation_id=attributes.get(search_attributes.CONVERSATION),
            started_at=execution.start_time.isoformat(),
            sender=memo.get("sender"),
            reason=memo.get("refused"),
        ))
    return {"refusals": refusals}
