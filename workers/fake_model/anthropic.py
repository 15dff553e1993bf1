"""A fake of Anthropic's Messages API as Claude Code calls it: `POST /v1/messages?beta=true`,
streamed as server-sent events (message_start, content_block_*, message_delta, message_stop). The
tests script it step by step; `isolator fake-model` answers from each message (scripted.py).

A write step is a `Write` tool call and a run step a `Bash` one; the worktree is read from the
`Primary working directory:` Claude Code tells the model, since Write needs an absolute path.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from workers.fake_model.server import FakeModelApi, Step

MODEL = "claude-sonnet-4-5"


class FakeAnthropicApi(FakeModelApi):
    path = "/v1/messages"

    def _content(self, step: Step, body: dict[str, Any]) -> list[dict[str, Any]]:
        if step.kind == "write":
            path = step.path if step.path.startswith("/") else f"{_working_directory(body)}/{step.path}"
            return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": "Write",
                     "input": {"file_path": path, "content": step.text}}]
        if step.kind == "run":
            return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": "Bash",
                     "input": {"command": step.command, "description": "run it"}}]
        if step.kind == "tool":
            return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": step.path,
                     "input": step.tool_input}]
        return [{"type": "text", "text": step.text}]

    def _usage(self, step: Step) -> dict[str, int]:
        return {"input_tokens": step.input_tokens, "output_tokens": step.output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def whole(self, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        content = self._content(step, body)
        return {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
                "model": body.get("model", MODEL), "content": content, "stop_sequence": None,
                "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
                "usage": self._usage(step)}

    def events(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        message = self.whole(step, body)
        start = {**message, "content": [], "stop_reason": None,
                 "usage": {**message["usage"], "output_tokens": 1}}
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                opened = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": step.output_tokens},
                               "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events

    def conversation_texts(self, call_index: int) -> str:
        """Everything the user and the assistant said in one request, as one text."""
        return json.dumps(self.calls[call_index].body.get("messages", []))


def _working_directory(body: dict[str, Any]) -> str:
    found = re.search(r"Primary working directory: ([^\s\\\"]+)", json.dumps(body))
    return found.group(1) if found else "."
