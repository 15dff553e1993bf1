"""The fake of Anthropic's Messages API (the product's, workers/fake_model/anthropic.py, which
`isolator fake-model` serves too), and the failures the tests script with it."""

from __future__ import annotations

from tests.fakes.model_api import Step, error
from workers.fake_model.anthropic import MODEL, FakeAnthropicApi

__all__ = ["MODEL", "FakeAnthropicApi", "overloaded", "rate_limited", "refused_key", "server_error"]


def refused_key() -> Step:
    return error(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
                 {"x-should-retry": "false"})


def rate_limited(reset_epoch: int) -> Step:
    return error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                   "message": "This request would exceed your rate limit."}},
                 {"x-should-retry": "false", "retry-after": "3600",
                  "anthropic-ratelimit-unified-status": "rejected",
                  "anthropic-ratelimit-unified-reset": str(reset_epoch)})


def overloaded() -> Step:
    return error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


def server_error() -> Step:
    return error(500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}})
