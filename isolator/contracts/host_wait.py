"""What a message waiting for its codebase's host knows of that host (workflows/host_wait.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HostSeen:
    """When a host's worker was last seen asking for work, and how long a message waits for it."""

    host: str
    last_seen: float | None  # seconds since the epoch; None: not seen lately (Temporal forgets after minutes)
    last_seen_text: str | None  # "12:03 UTC", said to the user
    wait_hours: float  # HOST_WAIT_HOURS of the worker that looked
