#!/usr/bin/env python3
"""A small example agent, so that a whole run can be seen with nothing else installed.

It speaks Claude Code's headless interface (`-p --output-format stream-json --verbose`, the message
on standard input, `--resume <session id>` on later turns), so isolator drives it with the `claude`
driver: `AGENT=claude AGENT_EXECUTABLE=/path/to/examples/agent.py` (what `make dev` does unless AGENT
or AGENT_COMMAND is set). It prints the same JSON events Claude Code does: it looks around the
worktree, writes the message into NOTES.md, runs `git status`, and answers with what it remembers
of the conversation, which it keeps as a session where Claude Code keeps its own: in CLAUDE_CONFIG_DIR,
the conversation's folder that the driver names and the sandbox lets it write (its HOME is empty at
every run). It costs nothing; the tokens it reports are a rough count of the
characters it read and wrote.

Run as a plain command (`AGENT_COMMAND=/path/to/examples/agent.py`), it prints plain text, the answer
as the command driver passes it on, and keeps its memory where such a program must: in
`ISOLATOR_SESSION_DIR`, the conversation's own folder, writable in the sandbox and kept between its
runs (its `HOME` is empty at every run).

Replace it with a real coding agent: `AGENT=claude`, `AGENT=codex` or `AGENT=aider` (docs/agent-drivers.md).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path


def emit(event: dict, pause: float = 0.6) -> None:
    if streaming:
        print(json.dumps({**event, "session_id": session_id}), flush=True)
    time.sleep(pause)


def show(line: str) -> None:
    """A line of the plain-text answer (as a command); the events say it when streaming."""
    if not streaming:
        print(line, flush=True)


def tool(name: str, given: dict, run) -> None:  # noqa: ANN001 - a function returning (text, failed)
    call = f"toolu_{uuid.uuid4().hex[:12]}"
    emit({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": call, "name": name, "input": given}]}}, pause=0.3)
    text, failed = run()
    show(f"{name} {given.get('command') or Path(given['file_path']).name}: {text.strip()}")
    emit({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call, "content": text, "is_error": failed}]}})


def say(text: str) -> None:
    show(text)
    emit({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})


options = argparse.ArgumentParser()
options.add_argument("-p", "--print", action="store_true")
options.add_argument("--output-format", default="text")
options.add_argument("--verbose", action="store_true")
options.add_argument("--permission-mode")
options.add_argument("--resume")
options.add_argument("--max-budget-usd")
options.add_argument("--input-format", default="text")
arguments, _ = options.parse_known_args()

streaming = arguments.output_format == "stream-json"  # driven as Claude Code is; else a plain command
session_id = arguments.resume or str(uuid.uuid4())
if "ISOLATOR_SESSION_DIR" in os.environ:  # the command driver's folder of the conversation: one session
    history_file = Path(os.environ["ISOLATOR_SESSION_DIR"]) / "example-agent-history.json"
else:
    sessions = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path(os.environ.get("HOME", ".")) / ".claude")
    history_file = sessions / "isolator-example-agent" / f"{session_id}.json"
if arguments.resume and not history_file.is_file():
    message = f"No conversation found with session ID: {session_id}"
    print(message, file=sys.stderr)
    emit({"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
          "errors": [message], "total_cost_usd": 0, "usage": {}}, pause=0)
    sys.exit(1)
history: list[str] = json.loads(history_file.read_text()) if history_file.is_file() else []

def read_message() -> str:
    """The message: standard input's text, or with `--input-format stream-json` (how isolator drives
    Claude Code, answering its permission prompts on the same input) its first `user` event."""
    if arguments.input_format != "stream-json":
        return sys.stdin.read()
    for line in sys.stdin:
        event = json.loads(line) if line.strip() else {}
        if event.get("type") == "user":
            return str(event["message"]["content"])
    return ""


message = read_message().strip() or "(an empty message)"
emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Write", "Bash"], "model": "example",
      "permissionMode": arguments.permission_mode or "default"}, pause=0.1)
say(f"Working on: {message}")


def write_note() -> tuple[str, bool]:
    with open("NOTES.md", "a") as notes:
        notes.write(f"- {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC: {message}\n")
    return "File updated successfully", False


def git_status() -> tuple[str, bool]:
    done = subprocess.run(["git", "status", "--short"], capture_output=True, text=True)
    return (done.stdout or "(clean)") if done.returncode == 0 else f"Exit code {done.returncode}\n{done.stderr}", \
        done.returncode != 0


tool("Write", {"file_path": str(Path.cwd() / "NOTES.md"), "content": message}, write_note)
tool("Bash", {"command": "git status --short"}, git_status)
remembered = (" Earlier in this conversation you said: " + "; ".join(f"“{said}”" for said in history[-3:]) + "."
              if history else " This is the first message of our session.")
answer = f"I took a note of your message in NOTES.md.{remembered} A real agent would have changed the code."
say(answer)
history.append(message)
history_file.parent.mkdir(parents=True, exist_ok=True)
history_file.write_text(json.dumps(history))
read = sum(len(said) for said in history) // 4 + 200
emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": len(history), "result": answer,
      "total_cost_usd": 0, "usage": {"input_tokens": read, "output_tokens": len(answer) // 4,
                                     "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}, pause=0)
