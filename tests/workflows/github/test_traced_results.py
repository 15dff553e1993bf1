"""The results are in their message's trace (docs/observability.md, "Traces"): with tracing on, the
service's push and its pull request are spans under the run's results activities, in the trace whose
root is the GitHub webhook's request that asked for the run. Real git (origin a local bare repository),
the fake GitHub API, PostgreSQL and Temporal, traced in this process to the SDK's in-memory exporter."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, URL
from tests.results import final_message, say_on_issue, with_github_origin
from tests.traces import ancestry, exporter, seen, spans_when, traced  # noqa: F401


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def test_the_push_and_the_pull_request_are_spans_of_the_message_s_trace(
    traced: Stack, exporter: InMemorySpanExporter, fake: FakeGitHub, repo: Path
) -> None:
    fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 42, title="Login fails on Safari")
    await traced.register(repo, url=URL)
    run_id = await say_on_issue(traced, 42, "@isolator please fix the login", opened=True)
    await final_message(traced.db, run_id, "Draft PR #")

    def read() -> list:
        return [seen(span) for span in exporter.get_finished_spans()]

    def rooted(spans: list, name: str) -> bool:
        return any(span.name == name and ancestry(spans, span)[0] == "POST /webhooks/github" for span in spans)

    spans = await spans_when(read, lambda found: rooted(found, "git push") and rooted(found, "pull request"))
    push = next(span for span in spans if span.name == "git push")
    pull = next(span for span in spans if span.name == "pull request")
    assert ancestry(spans, push)[-2:] == ["RunActivity:push_results", "git push"]
    assert ancestry(spans, pull)[-2:] == ["RunActivity:publish_results", "pull request"]
    assert push.trace_id == pull.trace_id and pull.attributes["repository"] == REPO
    run = (await traced.api.get(f"/api/runs/{run_id}")).json()
    assert run["trace_id"] == push.trace_id
