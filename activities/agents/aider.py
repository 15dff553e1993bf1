"""Aider, headless: `aider --yes-always --message-file F`, standard input closed. It has no session
id: its chat and input history files are the session, kept in the conversation's session folder
(outside the worktree, so they never show as the run's changes) and replayed on the next turn.
Its output is plain text, the answer as it is; its edits and token counts are read from it."""

from __future__ import annotations

import re
from pathlib import Path

from activities.agents.base import AgentError, Invocation, Turn, Usage, short

QUIET = ["--yes-always", "--no-pretty", "--no-fancy-input", "--no-auto-commits", "--no-gitignore",
         "--no-check-update", "--analytics-disable"]
_EDIT = re.compile(r"^Applied edit to (.+)$")
_TOKENS = re.compile(r"^Tokens: ([\d.,]+k?) sent, ([\d.,]+k?) received\.(?: Cost: \$([\d.]+) message)?")


def invocation(program: list[str], turn: Turn) -> Invocation:
    message_file = turn.session_dir / "message.txt"
    message_file.write_text(turn.message)
    argv = [*program[:1], *QUIET,
            "--chat-history-file", str(turn.session_dir / "chat-history.md"),
            "--input-history-file", str(turn.session_dir / "input-history"),
            "--llm-history-file", str(turn.session_dir / "llm-history"),
            *(["--restore-chat-history"] if turn.run_number > 1 else []),
            *program[1:], "--message-file", str(message_file)]
    return Invocation(argv, None, {"AIDER_ANALYTICS_DISABLE": "true", "AIDER_CHECK_UPDATE": "false"})


class Reader:
    def __init__(self, worktree: Path | None = None) -> None:
        self.session_id: str | None = None
        self.result: str | None = None  # plain text: the whole output is the answer
        self.usage = Usage()
        self.error: AgentError | None = None
        self.did: list[str] = []
        self.partial = ""

    def feed(self, text: str) -> list[str]:
        *lines, self.partial = (self.partial + text).split("\n")
        for line in lines:
            self._line(line.strip())
        return [text]

    def _line(self, line: str) -> None:
        if edit := _EDIT.match(line):
            entry = f"edited `{edit.group(1)}`"
            if entry not in self.did:
                self.did.append(entry)
        elif tokens := _TOKENS.match(line):
            cost = float(tokens.group(3)) if tokens.group(3) else None
            self.usage = Usage(
                input_tokens=self.usage.input_tokens + _count(tokens.group(1)),
                output_tokens=self.usage.output_tokens + _count(tokens.group(2)),
                cost_usd=(self.usage.cost_usd or 0.0) + cost if cost is not None else self.usage.cost_usd,
            )
        elif self.error is None and (problem := _problem(line)):
            self.error = problem

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        self._line(self.partial.strip())
        self.partial = ""
        if self.error is None and exit_code not in (0, None):
            last = next((line for line in reversed(stderr_tail) if line.strip()), "")
            self.error = AgentError("other", short(last, 300) or f"exit code {exit_code}")


def _problem(line: str) -> AgentError | None:
    lowered = line.lower()
    if "authenticationerror" in lowered or "invalid api key" in lowered:
        return AgentError("auth", short(line, 300))
    if "ratelimiterror" in lowered:
        return AgentError("rate_limit", short(line, 300))
    if "overloaded" in lowered:
        return AgentError("overloaded", short(line, 300))
    if "apiconnectionerror" in lowered or "internalservererror" in lowered:
        return AgentError("api", short(line, 300))
    return None


def _count(text: str) -> int:
    number = text.replace(",", "")
    return int(float(number[:-1]) * 1000) if number.endswith("k") else int(float(number))
