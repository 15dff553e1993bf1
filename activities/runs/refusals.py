"""What the sandbox's egress proxy refuses a run's agent, said in its conversation while it works.

The proxy (activities/sandbox/egress_proxy.py) hands each refusal to the run whose program asked.
Without this it would be in the worker's log only, and an agent whose model API is refused would show
nothing but its working line while it retries for minutes. A program asks again for what it needs (an
agent its model API, pip its index) and once only for what it does without (Codex looks at chatgpt.com
and github.com at every start, and goes on): a host and port refused a second time get a line in the
answer, naming them and the setting that opens them. The agent's reader hears it too, so that an agent
retrying what the sandbox refuses is stopped (activities/runs/agents/codex.py).
"""

from __future__ import annotations

from collections import Counter

from activities.runs.agents.base import LineReader, Reader
from activities.runs.answer import AnswerStream
from activities.sandbox.egress_proxy import Refusal, refusals_heard_by

INSISTS = 2  # refusals of one host and port that show the program needs it


class Refusals:
    def __init__(self, answer: AnswerStream, reader: Reader) -> None:
        self.answer = answer
        self.reader = reader
        self.times: Counter[tuple[str, int]] = Counter()

    def heard(self, refusal: Refusal) -> None:
        self.times[refusal.host, refusal.port] += 1
        if self.times[refusal.host, refusal.port] != INSISTS:
            return
        self.answer.add(f"⚠ {refused_text(refusal)}\n")
        if isinstance(self.reader, LineReader):
            self.reader.refused.append(refusal)


def hear_refusals(answer: AnswerStream, reader: Reader) -> None:
    """The refusals of the sandbox this task opens next come to `answer` and `reader` (each turn of a run
    sets its own: the run's task is the proxy's listener's only reader)."""
    refusals_heard_by.set(Refusals(answer, reader).heard)


def refused_text(refusal: Refusal) -> str:
    return (f"The sandbox refused `{refusal.host}:{refusal.port}` ({refusal.reason}): an operator can allow it "
            "with SANDBOX_ALLOWED_HOSTS (docs/sandbox.md).")
