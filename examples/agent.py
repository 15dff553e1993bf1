#!/usr/bin/env python3
"""A small example agent, so that a whole run can be seen with nothing else installed.

isolator runs it in the conversation's worktree with the message on standard input. Whatever it
prints is the answer, streamed to the conversation as it is written; standard error is the run's
log. It looks around the worktree, thinks aloud for a few seconds, and writes the message into
NOTES.md, so the closing summary has a change to report.

Use it with `AGENT_COMMAND=/path/to/examples/agent.py` (`make dev` does, unless AGENT_COMMAND is set).
Replace it with a real coding agent: `claude -p`, `codex exec -`, `aider --yes-always --message-file /dev/stdin`.
"""

import os
import subprocess
import sys
import time
from datetime import datetime, timezone


def say(text: str, pause: float = 0.8) -> None:
    print(text, flush=True)
    time.sleep(pause)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()


message = sys.stdin.read().strip() or "(an empty message)"
branch = os.environ.get("ISOLATOR_BRANCH", git("branch", "--show-current"))
files = git("ls-files").splitlines()

say(f"Working on: {message}")
say(f"I am in `{branch}`, a worktree of my own with {len(files)} tracked files.")
for step in ("Reading the code…", "Thinking…", "Writing NOTES.md…"):
    say(step)
with open("NOTES.md", "a") as notes:
    notes.write(f"- {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC: {message}\n")
print("example agent: wrote NOTES.md", file=sys.stderr)
say("Done. A real agent would have changed the code; this one only took a note.", pause=0)
