"""Fuzzing the HTTP API from its own OpenAPI document (schemathesis): valid and invalid requests to
every operation, and never a 5xx."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from pydantic import SecretStr
from schemathesis import GenerationMode

from isolator.repositories import is_clone_url
from isolator.settings import Settings
from tests.conftest import Stack
from tests.gitrepos import worktree_paths
from tests.security.fuzzing import draw_examples

BASE_URL = "http://isolator.test"
PER_OPERATION = 20  # valid and invalid requests drawn for each operation of the document


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Every webhook mounted too, so that the document lists them (requests without a signature)."""
    return settings.model_copy(update={
        "github_webhook_secret": SecretStr("github-secret"),
        "slack_signing_secret": SecretStr("slack-secret"),
        "slack_bot_token": SecretStr("xoxb-not-used"),
        "telegram_webhook_secret": SecretStr("telegram-secret"),
    })


def keep_offline(case: schemathesis.Case, stack: Stack) -> None:
    """A registration the API accepts goes to a worker: keep it on this test's host and off the network.

    Another host has no worker here, so its registration would wait for one (see the report), and a
    real clone URL would reach for the network. Values the API refuses are left as generated.
    """
    body = case.body
    if case.path != "/api/codebases" or case.method.upper() != "POST" or not isinstance(body, dict):
        return
    host = body.get("host")
    if isinstance(host, str) and host and not any(ch.isspace() or ch == "@" or not ch.isprintable() for ch in host):
        body["host"] = stack.settings.host
    if isinstance(body.get("url"), str) and is_clone_url(body["url"]):
        body["url"] = (stack.tmp_path / "no-such-upstream").as_uri()


async def test_no_request_the_document_allows_or_forbids_gets_a_5xx(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    document = (await stack.api.get("/openapi.json")).json()
    schema = schemathesis.openapi.from_dict(document)
    cases = []
    for operation in (result.ok() for result in schema.get_all_operations()):  # each one, whatever their number
        strategy = operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)
        cases += draw_examples(strategy, PER_OPERATION)
    assert len(cases) >= 10 * len(document["paths"])

    outcomes: Counter[tuple[str, int]] = Counter()
    for case in cases:
        keep_offline(case, stack)
        request = case.as_transport_kwargs(base_url=BASE_URL)
        body = {key: request[key] for key in ("json", "data") if key in request}
        sent = stack.api.request(
            request["method"], request["url"], params=request.get("params"), headers=request.get("headers"),
            cookies=request.get("cookies"), **({"content": body["data"]} if "data" in body else body),
        )
        try:
            response = await asyncio.wait_for(sent, timeout=30)
        except TimeoutError:
            raise AssertionError(f"no answer within 30 s: {case.as_curl_command(base_url=BASE_URL)}") from None
        # A readiness probe's 503 is its answer, not a fault: on a loaded machine Temporal may not answer it in time.
        not_ready = case.path == "/readyz" and response.status_code == 503 and "unavailable" in response.text
        assert response.status_code < 500 or not_ready, f"{response.status_code} {response.text}\n{case.as_curl_command()}"
        outcomes[(f"{case.method.upper()} {case.path}", response.status_code // 100)] += 1

    operations = {f"{method.upper()} {path}" for path, methods in document["paths"].items() for method in methods}
    assert {operation for operation, _ in outcomes} == operations, "every operation was exercised"
    for operation in ("POST /test/message", "GET /test/messages/{conversation_id}"):
        assert outcomes[(operation, 2)] and outcomes[(operation, 4)], f"{operation}: both accepted and refused"
    assert outcomes[("POST /api/codebases", 4)] >= 10, "random paths are no checkouts: refused, with a reason"
    base = stack.settings.worktree_base.resolve()
    assert all(Path(path).is_relative_to(base) for path in worktree_paths(repo)), "worktrees stay in the base"
