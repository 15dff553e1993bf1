"""What the bot says while a codebase's host does not answer (workflows/host_wait.py)."""

from __future__ import annotations


def _since(last_seen: str | None) -> str:
    return f"since {last_seen}" if last_seen else "for some minutes"


def waiting(codebase: str, host: str, last_seen: str | None) -> str:
    return (f"The machine holding `{codebase}` ({host}) has not answered {_since(last_seen)}. "
            "Your message waits and runs when it is back.")


def not_run(codebase: str, host: str, hours: float) -> str:
    return (f"The machine holding `{codebase}` ({host}) did not come back within {hours:g} hours "
            "(HOST_WAIT_HOURS): your message was not run. Send it again once the machine is back.")


def status_line(codebase: str, host: str, last_seen: str | None) -> str:
    """`/status` while the host is silent: said from the database, the worktree counts left out."""
    return (f"Host: {host}, holding `{codebase}`, has not answered {_since(last_seen)}: "
            "messages here wait for it, and the runs above with them.")
