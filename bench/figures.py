"""Samples to figures: percentiles, timing helpers and the printed table."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Awaitable, Callable


@dataclass
class Latency:
    samples: int
    p50: float
    p90: float
    p99: float

    @classmethod
    def of(cls, milliseconds: list[float]) -> "Latency":
        cuts = statistics.quantiles(milliseconds, n=100, method="inclusive")
        return cls(len(milliseconds), round(cuts[49], 1), round(cuts[89], 1), round(cuts[98], 1))

    def __str__(self) -> str:
        return f"p50 {self.p50:.1f} ms, p90 {self.p90:.1f} ms, p99 {self.p99:.1f} ms (n={self.samples})"


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    """Milliseconds that one awaited call took."""
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


@dataclass
class Figure:
    """One line of the report: what was measured, its value, its baseline, and the target."""

    case: str
    value: str
    baseline: str = ""
    verdict: str = ""  # "ok" / "MISSED" against the target, empty when there is none
    data: dict[str, Any] = field(default_factory=dict)


def verdict(met: bool) -> str:
    return "ok" if met else "MISSED"


def print_table(figures: list[Figure]) -> None:
    widths = [max(len(getattr(figure, name)) for figure in figures) for name in ("case", "value", "baseline")]
    for figure in figures:
        cells = (figure.case.ljust(widths[0]), figure.value.ljust(widths[1]), figure.baseline.ljust(widths[2]))
        print("  ".join(cells), figure.verdict, sep="  ")


def as_json(figures: list[Figure]) -> list[dict[str, Any]]:
    return [asdict(figure) for figure in figures]
