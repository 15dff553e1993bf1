"""How much of an agent's progress each platform shows while the agent works.

GitHub edits one comment, rate-limited and read later: it gets a compact list of the agent's steps
(files edited, commands run). Chats are read live: they get the running lines, text included.
A plain-text agent's output is its answer, so it is shown whole everywhere.
"""

from __future__ import annotations

from typing import Sequence

STEPS_ONLY_PLATFORMS = frozenset({"github"})
MAX_STEPS_SHOWN = 30  # the latest ones; the final answer lists them all


def shows_steps_only(platform: str, streams_events: bool) -> bool:
    """Whether the streamed message shows only the agent's steps, not its running lines."""
    return streams_events and platform in STEPS_ONLY_PLATFORMS


def steps_view(steps: Sequence[str]) -> str:
    """One bullet per step, deduplicated, the latest MAX_STEPS_SHOWN; empty when there is none yet."""
    unique = list(dict.fromkeys(step for step in steps if step.strip()))
    if not unique:
        return ""
    shown = unique[-MAX_STEPS_SHOWN:]
    earlier = len(unique) - len(shown)
    lines = [f"• … and {earlier} earlier step{'s' if earlier > 1 else ''}"] if earlier else []
    return "\n".join(lines + [f"• {step}" for step in shown])
