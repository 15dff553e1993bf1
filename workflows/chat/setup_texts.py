"""What `/status` says about a set-up beyond its state (kept as the environment's `setup_note`): that
there is nothing to set up, the last lines a successful set-up printed, a `.isolator.toml` not pushed."""

from __future__ import annotations

from isolator.contracts.repository import RepositorySetup

NOTHING_TO_SET_UP = "nothing to set up: the default branch has no `.isolator.toml`"
# What `/worktree setup` answers, beside a set-up's states, when the repository configures no command.
NO_SETUP_FILE = "no_setup_file"
NO_SETUP_COMMANDS = "no_setup_commands"
SHOWN_LINES = 5


def setup_note(setup: RepositorySetup, tail: list[str]) -> str | None:
    lines = []
    if not setup.found:
        lines.append(NOTHING_TO_SET_UP)
    if tail:
        lines.append("Its last lines:\n```\n" + "\n".join(tail[-SHOWN_LINES:]) + "\n```")
    if setup.unpushed:
        lines.append(setup.unpushed)
    return "\n".join(lines) or None


def status_lines(state: str, note: str | None) -> list[str]:
    """`Set-up: …` and what the note adds; "ready" is not said of a set-up that had nothing to do."""
    if note is not None and note.startswith(NOTHING_TO_SET_UP):
        return [f"Set-up: {note}"]
    return [f"Set-up: {state}"] + ([note] if note else [])
