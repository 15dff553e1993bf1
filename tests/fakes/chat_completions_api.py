"""A fake of OpenAI's Chat Completions API as Aider (through litellm) calls it: `POST
/v1/chat/completions`, streamed as server-sent `data: {...}` chunks ending with `data: [DONE]`, the
usage in a last chunk of its own when `stream_options.include_usage` asks for it.

Aider has no tools: it reads its edits and shell commands from the reply's text, in the edit format
of its model, and makes one request a message. So the write and run steps of a script up to its
next text step make one reply: that text, then a block for each, in the `diff` format that Aider
picks for `openai/gpt-4o` (a write is a SEARCH/REPLACE block with an empty SEARCH, a new file; a
run is a ```bash block, which Aider offers to run).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import replace
from typing import Any, AsyncIterator

from tests.fakes.model_api import FakeModelApi, Step, error

MODEL = "gpt-4o"  # known to Aider (the diff edit format) and to litellm's price list (a cost)


def reply_text(step: Step) -> str:
    if step.kind == "write":
        return f"{step.path}\n```\n<<<<<<< SEARCH\n=======\n{step.text.rstrip()}\n>>>>>>> REPLACE\n```\n"
    if step.kind == "run":
        return f"```bash\n{step.command}\n```\n"
    return step.text


class FakeChatCompletionsApi(FakeModelApi):
    path = "/v1/chat/completions"

    def next_step(self, body: dict[str, Any]) -> Step:
        """One reply is one turn of Aider: the write and run steps up to the next text step, after its text."""
        actions = []
        while self.script and self.script[0].kind in ("write", "run"):
            actions.append(self.script.pop(0))
        if not actions:
            return super().next_step(body)
        final = self.script.pop(0) if self.script and self.script[0].kind == "text" else Step("text")
        return replace(final, text="\n\n".join([final.text, *map(reply_text, actions)]).strip() + "\n")

    def _chunk(self, ident: str, body: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return {"id": ident, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", MODEL), **fields}

    def _usage(self, step: Step) -> dict[str, Any]:
        return {"prompt_tokens": step.input_tokens, "completion_tokens": step.output_tokens,
                "total_tokens": step.input_tokens + step.output_tokens}

    async def _sse(self, step: Step, body: dict[str, Any]) -> AsyncIterator[bytes]:
        ident = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        chunks = [
            self._chunk(ident, body, choices=[{"index": 0, "delta": {"role": "assistant", "content": reply_text(step)},
                                               "finish_reason": None}]),
            self._chunk(ident, body, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append(self._chunk(ident, body, choices=[], usage=self._usage(step)))
        for chunk in chunks:
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def whole(self, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", MODEL), "usage": self._usage(step),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply_text(step)}}]}


def refused_key() -> Step:
    return error(401, {"error": {"message": "Incorrect API key provided: sk-test.", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}})


def rate_limited(resets_in_seconds: int) -> Step:
    return error(429, {"error": {"message": f"Rate limit reached. Please try again in {resets_in_seconds}s.",
                                 "type": "requests", "code": "rate_limit_exceeded"}},
                 {"x-ratelimit-reset-requests": f"{resets_in_seconds}s"})


def overloaded() -> Step:
    return error(529, {"error": {"message": "The engine is currently overloaded.", "type": "server_error"}})


def server_error() -> Step:
    return error(500, {"error": {"message": "Internal server error", "type": "server_error"}})
