"""A fake of OpenAI's Responses API as Codex calls it: `POST /v1/responses`, streamed as
server-sent events ending with `response.completed` (with its usage).

A write step is an `apply_patch` call that adds the file, and a run step a shell call; Codex sends
the whole history in `input` with every request, tool results as `*_call_output` items.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from tests.fakes.model_api import FakeModelApi, Step, error

MODEL = "gpt-5.5"


class FakeOpenAiApi(FakeModelApi):
    path = "/v1/responses"

    def _item(self, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        call_id = f"call_{uuid.uuid4().hex[:16]}"
        tools = {tool.get("name"): tool for tool in body.get("tools", []) if isinstance(tool, dict)}
        if step.kind == "write":
            lines = "".join(f"+{line}\n" for line in step.text.splitlines())
            patch = f"*** Begin Patch\n*** Add File: {step.path}\n{lines}*** End Patch\n"
            if tools.get("apply_patch", {}).get("type") == "custom":
                return {"type": "custom_tool_call", "id": f"ctc_{call_id}", "call_id": call_id, "status": "completed",
                        "name": "apply_patch", "input": patch}
            return self._shell(call_id, tools, ["apply_patch", patch])
        if step.kind == "run":
            return self._shell(call_id, tools, ["bash", "-lc", step.command])
        return {"type": "message", "id": f"msg_{call_id}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}]}

    def _shell(self, call_id: str, tools: dict[str, Any], argv: list[str]) -> dict[str, Any]:
        if "shell_command" in tools:
            name, arguments = "shell_command", {"command": argv[-1] if argv[0] == "bash" else " ".join(argv)}
        elif "exec_command" in tools:
            name, arguments = "exec_command", {"cmd": argv[-1] if argv[0] == "bash" else " ".join(argv)}
        else:
            name, arguments = "shell", {"command": argv}
        return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "status": "completed",
                "name": name, "arguments": json.dumps(arguments)}

    def _response(self, step: Step, body: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": f"resp_{uuid.uuid4().hex[:16]}", "object": "response", "status": "completed",
                "model": body.get("model", MODEL), "output": output,
                "usage": {"input_tokens": step.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": step.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": step.input_tokens + step.output_tokens}}

    def whole(self, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        return self._response(step, body, [self._item(step, body)])

    def events(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        item = self._item(step, body)
        response = self._response(step, body, [item])
        created = {**response, "status": "in_progress", "output": []}
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": created}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
        ]
        if item["type"] == "message":
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
                "delta": step.text}))
        events += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": response}),
        ]
        return events


def refused_key() -> Step:
    return error(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}})


def rate_limited(resets_in_seconds: int) -> Step:
    return error(429, {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                                 "resets_in_seconds": resets_in_seconds,
                                 "resets_at": int(time.time()) + resets_in_seconds}},
                 {"x-codex-primary-reset-after-seconds": str(resets_in_seconds)})


def overloaded() -> Step:
    return error(529, {"error": {"message": "The engine is currently overloaded.", "type": "server_error"}})


def server_error() -> Step:
    return error(500, {"error": {"message": "Internal server error", "type": "server_error"}})
