"""The fake model APIs' server and script steps, from the product: `isolator fake-model` serves the same
fake (workers/fake_model/), so that a person can try an agent without a key. The tests' fakes of each
API (anthropic_api.py, openai_api.py, chat_completions_api.py) import them from here."""

from __future__ import annotations

from workers.fake_model.server import DEFAULT_TEXT, Call, FakeModelApi, Step, error, run, text, tool, write

__all__ = ["DEFAULT_TEXT", "Call", "FakeModelApi", "Step", "error", "run", "text", "tool", "write"]
