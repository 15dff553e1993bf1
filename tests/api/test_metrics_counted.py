"""The counters of what no table records (isolator/metrics.py), moved by the real thing: a webhook with a
wrong signature, a delivery seen before; and the reasons' classes a label may take."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from isolator import metrics
from isolator.contracts.warm import WarmClaim
from isolator.egress_rules import decide
from isolator.settings import Settings
from tests.conftest import Stack
from tests.metrics import moved, scrape
from workers.metrics_interceptor import kept_why, miss_why, removal_why


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"github_webhook_secret": SecretStr("the-webhook-secret")})


async def test_refused_signatures_and_redeliveries_are_counted(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    before = await scrape(stack.api)
    refused = await stack.api.post("/webhooks/github", content=b'{"action": "created"}', headers={
        "X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": "sha256=" + "0" * 64})
    assert refused.status_code == 401
    message = {"conversationId": "counted-1", "message": "hello", "messageId": "the-same-delivery"}
    for _ in range(2):  # the second finds the first's workflow finished: nothing runs twice
        said = await stack.api.post("/test/message", params={"wait": "true"}, json=message)
        assert said.status_code == 200, said.text
    after = await scrape(stack.api)
    assert moved(before, after, "isolator_webhook_signature_failures_total", platform="github") == 1
    assert moved(before, after, "isolator_webhook_redeliveries_total", platform="test", kind="message") == 1
    assert moved(before, after, "isolator_messages_total", platform="test") == 1


def test_each_label_takes_a_class_never_the_words() -> None:
    assert metrics.egress_reason(decide([], "example.com", 443, ["93.184.216.34"]).reason) == "not_allowed"
    assert metrics.egress_reason("10.0.0.1 is a loopback or private address (list it with its port to allow it)") \
        == "private_address"
    assert metrics.egress_reason("169.254.169.254 is link-local or reserved") == "link_local"
    assert metrics.egress_reason("the name resolves to no address") == "no_address"
    assert (metrics.limit_kind("memory"), metrics.limit_kind("pids")) == ("memory", "processes")
    assert removal_why("feature-x (merged)") == "merged"
    assert removal_why("thread-1a2b3c4d (45 days inactive, hibernated)") == "stale"
    assert kept_why("still used by 2 conversation(s)") == "in_use"
    assert kept_why("has unpushed commits") == "unpushed_commits"
    assert miss_why(WarmClaim("none", reason="the pool is empty, refilling")) == "empty"
    assert miss_why(WarmClaim("none", reason="its warm set-up failed: exit 1")) == "setup_failed"
    assert miss_why(WarmClaim("none", reason="the pool is off")) is None
    assert miss_why(WarmClaim("claimed")) is None
