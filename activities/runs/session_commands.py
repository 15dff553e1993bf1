"""`/reset` and the session line of `/status`: the conversation's agent session, read or ended."""

from __future__ import annotations

import asyncpg
from temporalio import activity

from activities.runs.agents import agent_name
from activities.runs.sessions import AgentSessions, Session
from isolator.contracts.agent_session import SessionQuery, SessionSummary


class AgentSessionActivities:
    def __init__(self, pool: asyncpg.Pool, executable: str | None = None) -> None:
        self.sessions = AgentSessions(pool)
        self.executable = executable  # the operator's AGENT_EXECUTABLE: names the example agent as such

    @activity.defn
    async def reset_agent_session(self, query: SessionQuery) -> SessionSummary:
        """End the conversation's session: its next message starts a new one. What it was."""
        return self._summary(await self.sessions.reset(query.platform, query.conversation_id))

    @activity.defn
    async def agent_session_summary(self, query: SessionQuery) -> SessionSummary:
        return self._summary(await self.sessions.current(query.platform, query.conversation_id))

    def _summary(self, session: Session | None) -> SessionSummary:
        if session is None:
            return SessionSummary()
        return SessionSummary(True, agent_name(session.driver, self.executable), session.turns,
                              session.started_at.isoformat(), session.cost_usd, session.tokens)
