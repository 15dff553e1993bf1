"""A team's own agent as a Temporal workflow (AGENT_WORKFLOW), with the JSON input isolator sends:
it writes a note in the worktree through an activity of its own and answers with `text`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow


@activity.defn(name="write_team_note")
async def write_team_note(request: dict[str, Any]) -> None:
    Path(request["working_path"], "TEAM_NOTE.md").write_text(f"{request['message']}\n")


@workflow.defn(name="TeamAgent", sandboxed=False)
class TeamAgent:
    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        if "fail" in request["message"]:
            raise RuntimeError("the team agent gave up")
        await workflow.execute_activity(write_team_note, request, start_to_close_timeout=timedelta(seconds=30))
        keys = ",".join(sorted(request))
        return {"text": f"team agent on `{request['branch']}` for {request['platform']} (input: {keys})"}
