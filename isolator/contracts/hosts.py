"""What is known of a worker host: whether one of its workers is alive, and since when it is silent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class HostLiveness:
    host: str
    alive: bool  # a worker of the host has refreshed its row within SILENT_AFTER_SECONDS
    workers: int  # its live worker processes
    last_seen: float | None  # seconds since the epoch, the database's clock; None: no worker ever recorded
    last_seen_text: str | None  # "12:03:07 UTC", as said to a person
