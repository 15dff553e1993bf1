"""Stubs of activities/runs/session_commands.py: the conversation's agent session, for `/reset` and `/status`."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.agent_session import SessionQuery, SessionSummary
from workflows.steps.options import LOCAL_OPTIONS

# `/reset`, and the session line of `/status`, ask the agent session's activities.
AGENT_SESSIONS = "agent-sessions"


def knows_agent_sessions() -> bool:
    return workflow.patched(AGENT_SESSIONS)


async def reset_agent_session(query: SessionQuery) -> SessionSummary:
    return await workflow.execute_local_activity("reset_agent_session", query, result_type=SessionSummary,
                                                 **LOCAL_OPTIONS)


async def agent_session_summary(query: SessionQuery) -> SessionSummary:
    return await workflow.execute_local_activity("agent_session_summary", query, result_type=SessionSummary,
                                                 **LOCAL_OPTIONS)
