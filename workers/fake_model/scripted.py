"""`isolator fake-model`: a model that needs no key, to try `AGENT=claude` and approvals (docs/agent.md).

It speaks Anthropic's Messages API on loopback (anthropic.py) and answers each message by its words, with
no intelligence at all:

- `run: <command>` calls Bash with the command (an `ask` rule of AGENT_APPROVALS makes it wait for a yes);
- `write <file>: <text>` calls Write with the text;
- anything else is answered with a line that says what it understands.

After a call it says how the call went; told that a person approved a call it was refused (the answer of
a request, docs/approvals.md), it makes the call again; told that a person denied it, it leaves it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from workers.fake_model.anthropic import FakeAnthropicApi
from workers.fake_model.server import Step, run, text, write
from workers.serving import stop_on_signals

RUN = re.compile(r"^\s*run:\s*(?P<command>.+?)\s*$", re.MULTILINE)
WRITE = re.compile(r"^\s*write\s+(?P<path>[^\s:]+):\s*(?P<text>.*)$", re.MULTILINE | re.DOTALL)
HELP = "I am isolator's fake model. Say `run: <command>` or `write <file>: <text>`, and I do it."


class ScriptedModel(FakeAnthropicApi):
    """Each answer read from the conversation the request carries: the API keeps no state between them."""

    keeps_calls = False

    def next_step(self, body: dict[str, Any]) -> Step:
        messages = [message for message in body.get("messages") or [] if isinstance(message, dict)]
        # the person's latest turn (Claude Code may send its environment after it, as a `system` message)
        last = next((message for message in reversed(messages) if message.get("role") == "user"), {})
        said = _words(last)
        results = [block for block in _blocks(last) if block.get("type") == "tool_result"]
        if results and not said:
            return text(_outcome(results[-1]))
        if "approved this call" in said and (call := _last_call(messages)) is not None:
            return call
        if "denied this call" in said:
            return text("Understood: I leave that call alone.")
        if found := RUN.search(said):
            return run(found["command"])
        if found := WRITE.search(said):
            return write(found["path"], found["text"].strip() + "\n")
        return text(HELP)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _words(message: dict[str, Any]) -> str:
    """What the person said; what Claude Code adds to a message (`<system-reminder>…`, `[Request interrupted…]`)
    left out."""
    return "\n".join(str(block.get("text", "")) for block in _blocks(message)
                     if block.get("type") == "text" and not str(block.get("text", "")).startswith(("<", "[")))


def _outcome(result: dict[str, Any]) -> str:
    content = result.get("content")
    said = content if isinstance(content, str) else " ".join(
        str(part.get("text", "")) for part in content or [] if isinstance(part, dict))
    first = said.strip().splitlines()[0] if said.strip() else ""
    if result.get("is_error"):
        return f"The call did not go through: {first or 'no reason given'}"
    return f"Done. It said: {first}" if first else "Done."


def _last_call(messages: list[dict[str, Any]]) -> Step | None:
    """The model's last call, made again (a person allowed it)."""
    for message in reversed(messages):
        for block in reversed(_blocks(message) if message.get("role") == "assistant" else []):
            given = block.get("input") or {}
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                return run(str(given.get("command", "")))
            if block.get("type") == "tool_use" and block.get("name") == "Write":
                return write(str(given.get("file_path", "")), str(given.get("content", "")))
    return None


async def serve(port: int) -> None:
    """The model on loopback at `port`, its variables printed once it listens, until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    stop_on_signals(stop)
    model = ScriptedModel()
    url = await model.start(port)
    print(banner(url), flush=True)
    try:
        await stop.wait()
    finally:
        await model.stop()


def banner(url: str) -> str:
    return (f"isolator fake-model is listening at {url}\n"
            "In another terminal, start the service with it (docs/agent.md):\n"
            f"  ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=fake-key CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \\\n"
            "  AGENT=claude AGENT_APPROVALS='ask: Bash(touch:*)' make dev\n"
            "Then send `run: touch hello.txt` (asks first), `run: ls`, or `write notes.md: some text`.\n"
            "Press Ctrl-C to stop.")
