"""What this process does with Telegram's updates now: polling for them (api/platforms/telegram/poller.py)
or setting the bot's webhook (api/platforms/telegram/webhook_setup.py). The doctor's check, run in the same
process (`isolator dev`'s start, `GET /api/doctor`, the dashboard), then leaves the webhook it finds to
them: the poller deletes it at its start, and the setting sets it, or logs why Telegram refused."""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Iterator, Literal

Doing = Literal["polling", "setting the webhook"]
_doing: Counter[Doing] = Counter()


@contextlib.contextmanager
def doing(what: Doing) -> Iterator[None]:
    _doing[what] += 1
    try:
        yield
    finally:
        _doing[what] -= 1


def doing_here(what: Doing) -> bool:
    return _doing[what] > 0
