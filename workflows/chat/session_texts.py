"""What the bot says about the agent's session (`/reset`, `/status`)."""

from __future__ import annotations

from isolator.contracts.agent_session import SessionSummary

RESET_USAGE = "Usage: `/reset` (no arguments): the agent's next run starts a new session, forgetting this conversation so far."


def reset(previous: SessionSummary) -> str:
    if not previous.exists:
        return "There was no agent session to reset: the next message starts a new one."
    spent = f"cost {_cost(previous)}" if previous.cost_usd else f"used {_cost(previous)}"  # tokens are not a price
    return (f"Reset: the agent's next run starts a new session, without what was said so far. The last one had "
            f"{_turns(previous.turns)} and {spent}.")


def status_line(session: SessionSummary) -> str:
    if not session.exists:
        return "Agent session: none yet (the next message starts one)."
    return (f"Agent session ({session.driver}): {_turns(session.turns)} since {session.started_at[:16].replace('T', ' ')} "
            f"UTC, {_cost(session)} so far. `/reset` starts a new one.")


def _turns(turns: int) -> str:
    return f"{turns} turn{'s' if turns != 1 else ''}"


def _cost(session: SessionSummary) -> str:
    tokens = f"{session.tokens / 1000:.1f}k tokens" if session.tokens >= 1000 else f"{session.tokens} tokens"
    return f"${session.cost_usd:.2f} · {tokens}" if session.cost_usd else tokens
