"""Whether this process polls Telegram now: the poller (api/platforms/telegram/poller.py) counts itself in
while it runs, and the doctor (activities/doctor/telegram.py) then leaves a webhook it finds set to the
poller, which deletes it at its start."""

from __future__ import annotations

import contextlib
from typing import Iterator

_pollers = 0


@contextlib.contextmanager
def polling() -> Iterator[None]:
    global _pollers
    _pollers += 1
    try:
        yield
    finally:
        _pollers -= 1


def polling_here() -> bool:
    return _pollers > 0
