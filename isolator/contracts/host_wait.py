"""What a message waiting for its codebase's host knows of that host (workflows/host_wait.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HostSeen:
    """Whether a host's worker is alive, since when it is silent, and how long a message waits for it."""

    host: str
    alive: bool  # one of its workers recorded itself within seconds (activities/hosts/liveness.py)
    last_seen_text: str | None  # "12:03:07 UTC", said to the user; None: no worker of it ever recorded
    wait_hours: float  # HOST_WAIT_HOURS of the worker that looked
