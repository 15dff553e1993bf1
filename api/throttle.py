"""Wrong API tokens, counted per client address, in this process's memory: those given to the dashboard's
login and those sent as `Authorization: Bearer` to `/api`, `/test` and the schema's pages, in one count
(they are guesses of the same secret).

The first FREE_FAILURES cost nothing; the last of them locks the address out for FIRST_LOCKOUT_SECONDS,
and each further failure doubles the lock-out, up to LONGEST_LOCKOUT_SECONDS. While locked out, the
address is answered 429 without looking at its token: were a right token let through, each guess would
still be told right or wrong, at full speed. Only failures count: a right token is never counted nor
delayed, and clears the address's count; so does an hour without failures. Several API processes each
count on their own: N processes allow N times as many guesses, which the doubling soon makes small. An
IPv6 client is counted by its /64 network, which one machine is usually given whole.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

FREE_FAILURES = 5
FIRST_LOCKOUT_SECONDS = 1.0
LONGEST_LOCKOUT_SECONDS = 15 * 60.0
FORGET_AFTER_SECONDS = 60 * 60.0
# The addresses remembered at most; past it, the one whose last failure is oldest is forgotten.
MOST_ADDRESSES = 10_000


@dataclass
class _Failures:
    count: int
    last: float
    locked_until: float


def client_key(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    return str(ipaddress.ip_network(f"{ip}/64", strict=False)) if ip.version == 6 else str(ip)


class TokenThrottle:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.failures: OrderedDict[str, _Failures] = OrderedDict()

    def locked_for(self, address: str) -> float:
        """The seconds the address must still wait before its next try; 0 when it may try now."""
        record = self._current(client_key(address))
        return max(record.locked_until - self.clock(), 0.0) if record else 0.0

    def failed(self, address: str) -> None:
        key, now = client_key(address), self.clock()
        record = self._current(key) or _Failures(0, now, now)
        record.count, record.last = record.count + 1, now
        if record.count >= FREE_FAILURES:
            lockout = FIRST_LOCKOUT_SECONDS * 2 ** min(record.count - FREE_FAILURES, 32)
            record.locked_until = now + min(lockout, LONGEST_LOCKOUT_SECONDS)
        self.failures[key] = record
        self.failures.move_to_end(key)
        while len(self.failures) > MOST_ADDRESSES:
            self.failures.popitem(last=False)

    def succeeded(self, address: str) -> None:
        self.failures.pop(client_key(address), None)

    def _current(self, key: str) -> _Failures | None:
        record = self.failures.get(key)
        if record and self.clock() - record.last > FORGET_AFTER_SECONDS:  # past any lock-out too
            del self.failures[key]
            return None
        return record
