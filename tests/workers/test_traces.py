"""One trace per message (docs/observability.md, "Traces"): with tracing on, the webhook's request is
the root of a trace that goes on, parent by parent, through the MessageWorkflow and its activities,
the environment workflow's update, the agent's run and its process. The run's page and
GET /api/runs/{id} show that trace's id. Real API, workers, PostgreSQL and Temporal, in this process,
with the SDK's in-memory exporter; off, no span is made."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from isolator import tracing
from isolator.settings import Settings
from tests.agent_runs import finished_run, runs_idle
from tests.agents import command
from tests.conftest import Stack
from tests.traces import ancestry, broken_links, exporter, one_trace, seen, spans_when, traced  # noqa: F401


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("reporter")})


async def test_one_trace_goes_from_the_webhook_down_to_the_agent_process(
    traced: Stack, exporter: InMemorySpanExporter, repo: Path
) -> None:
    await traced.register(repo)
    exporter.clear()
    created = (await traced.say("traced-1", "please add answer.txt"))["result"]
    run = await finished_run(traced, created["agentRunId"])
    assert run["status"] == "done"
    await runs_idle(traced, created["environmentId"])

    def read() -> list:
        return [seen(span) for span in exporter.get_finished_spans()]

    spans = await spans_when(read, lambda found: any(span.name == "agent process" for span in found))
    request = next(span for span in spans if span.name == "POST /test/message" and span.parent_id is None)
    trace = one_trace(spans, request.trace_id)
    names = {span.name for span in trace}
    for step in ("StartWorkflow:MessageWorkflow", "RunWorkflow:MessageWorkflow", "RunActivity:queue_agent_run",
                 "StartWorkflowUpdate:queue_run", "HandleUpdate:queue_run", "RunActivity:run_agent",
                 "RunWorkflow:AgentRunWorkflow", "agent process"):
        assert step in names, (step, sorted(names))
    assert broken_links(trace) == []
    agent = next(span for span in trace if span.name == "agent process")
    path = ancestry(trace, agent)
    assert path[0] == "POST /test/message" and "RunActivity:queue_agent_run" in path, path
    assert path[-2:] == ["RunActivity:run_agent", "agent process"], path
    assert agent.attributes["program"] == Path(command("reporter").split()[0]).name

    # The run's trace, where a person looks for it.
    assert run["trace_id"] == request.trace_id
    page = await traced.api.get(f"/runs/{run['id']}")
    assert page.status_code == 200 and f"<code>{request.trace_id}</code>" in page.text

    # The next message of the conversation, a reuse, is a trace of its own, down to its agent's process.
    exporter.clear()
    again = (await traced.say("traced-1", "and again"))["result"]
    assert (await finished_run(traced, again["agentRunId"]))["status"] == "done"
    await runs_idle(traced, again["environmentId"])
    spans = await spans_when(read, lambda found: any(span.name == "agent process" for span in found))
    request = next(span for span in spans if span.name == "POST /test/message" and span.parent_id is None)
    trace = one_trace(spans, request.trace_id)
    assert "agent process" in {span.name for span in trace} and broken_links(trace) == []


async def test_without_tracing_a_run_records_no_trace(stack: Stack, repo: Path) -> None:
    assert not tracing.on() and tracing.client_interceptors() == []
    await stack.register(repo)
    created = (await stack.say("untraced-1", "hello"))["result"]
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "done" and run["trace_id"] is None
    assert "<dt>Trace</dt>" not in (await stack.api.get(f"/runs/{run['id']}")).text
