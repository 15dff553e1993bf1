"""Any program (`AGENT_COMMAND`): the message on its standard input, its standard output the answer,
as it is. `ISOLATOR_SESSION_DIR` (a folder per conversation, outside the worktree, kept between its
runs and new after `/reset`) and `ISOLATOR_RUN_NUMBER` let a home-made agent keep its own memory."""

from __future__ import annotations

from pathlib import Path

from activities.runs.agents.base import AgentError, Invocation, Turn, Usage, last_words


def invocation(program: list[str], turn: Turn) -> Invocation:
    return Invocation(list(program), turn.message.encode(), {
        "ISOLATOR_SESSION_DIR": str(turn.session_dir), "ISOLATOR_RUN_NUMBER": str(turn.run_number),
    })


class Reader:
    def __init__(self, worktree: Path | None = None) -> None:
        self.session_id: str | None = None
        self.result: str | None = None
        self.usage = Usage()
        self.error: AgentError | None = None
        self.did: list[str] = []

    def feed(self, text: str) -> list[str]:
        return [text]

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        if exit_code not in (0, None):
            self.error = AgentError("other", last_words(stderr_tail) or f"exit code {exit_code}")
