"""The baseline of the reuse path: a bare workflow with as many activities, all doing nothing.

The reuse path runs two local activities (record the conversation, validate its worktree), so
the bare workflow runs two no-op local activities. Its searchable form also carries what the
message workflow must for the Temporal UI: two search attributes and a summary at the start, three
search attributes upserted at the end; set against it, the service's remaining cost is its own code.
Both are deployed the way the service is, in two processes: `python -m bench.baseline worker` runs
them on BENCH_QUEUE, as `isolator worker` runs the service's workflows, and `python -m bench.baseline
http` answers `POST /bare` and `POST /bare-searchable` on BENCH_BASELINE_PORT the way `isolator api`'s
test adapter answers `?wait=true`: start it, wait, reply. So the same HTTP
hop, between the same processes, is measured with and without the service's own work.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from datetime import timedelta
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.worker import Worker

from isolator.contracts import search_attributes
from isolator.payloads import connect
from workers.worker import WORKFLOW_RUNNER

REUSE_PATH_ACTIVITIES = 2


@activity.defn
async def do_nothing() -> None:
    return None


async def run_no_ops(activities: int) -> int:
    for _ in range(activities):
        await workflow.execute_local_activity(do_nothing, start_to_close_timeout=timedelta(seconds=10))
    return activities


@workflow.defn
class BareWorkflow:
    @workflow.run
    async def run(self, activities: int) -> int:
        return await run_no_ops(activities)


@workflow.defn
class SearchableBareWorkflow:
    """BareWorkflow with the message workflow's search attributes: the floor the findability sets."""

    @workflow.run
    async def run(self, activities: int) -> int:
        await run_no_ops(activities)
        workflow.upsert_search_attributes([search_attributes.OUTCOME.value_set("reused"),
                                           search_attributes.CODEBASE.value_set("small"),
                                           search_attributes.BRANCH.value_set("thread-00000000")])
        return activities


# What a message workflow is started with besides its input (api/dispatch.py)
SEARCHABLE_START = dict(
    search_attributes=TypedSearchAttributes([SearchAttributePair(search_attributes.PLATFORM, "test"),
                                             SearchAttributePair(search_attributes.CONVERSATION, "reuse")]),
    static_summary="test reuse: bench",
)


@workflow.defn
class CreateShapedBareWorkflow:
    """The create path's steps, all doing nothing: what Temporal alone costs that path.

    All local activities, as on the codebase's own host: record the conversation, then the three
    lookups together, the worktree, record the environment, then its workflow told and the reply
    sent together.
    """

    @workflow.run
    async def run(self) -> None:
        nothing = dict(start_to_close_timeout=timedelta(seconds=10))
        await workflow.execute_local_activity(do_nothing, **nothing)
        await asyncio.gather(*(workflow.execute_local_activity(do_nothing, **nothing) for _ in range(3)))
        for _ in range(2):
            await workflow.execute_local_activity(do_nothing, **nothing)
        await asyncio.gather(*(workflow.execute_local_activity(do_nothing, **nothing) for _ in range(2)))


@workflow.defn
class WarmShapedBareWorkflow:
    """A warm create's steps (docs/warm.md), all doing nothing: its floor against a reuse's two steps.

    Record the conversation; the identity, an adoptable worktree and the count together; an archive to
    return to; the claim; the environment's record; its workflow told and the reply sent together; the
    agent's run queued. Ten local activities where a reuse has two.
    """

    @workflow.run
    async def run(self) -> None:
        nothing = dict(start_to_close_timeout=timedelta(seconds=10))
        await workflow.execute_local_activity(do_nothing, **nothing)
        await asyncio.gather(*(workflow.execute_local_activity(do_nothing, **nothing) for _ in range(3)))
        for _ in range(3):
            await workflow.execute_local_activity(do_nothing, **nothing)
        await asyncio.gather(*(workflow.execute_local_activity(do_nothing, **nothing) for _ in range(2)))
        await workflow.execute_local_activity(do_nothing, **nothing)


def http_app(client: Client, queue: str) -> Starlette:
    def route(path: str, run: Any, **start: Any) -> Route:
        async def answer(request: Request) -> JSONResponse:
            result = await client.execute_workflow(run, REUSE_PATH_ACTIVITIES, id=f"bare-{uuid.uuid4().hex}",
                                                   task_queue=queue, **start)
            return JSONResponse({"success": True, "result": result})

        return Route(path, answer, methods=["POST"])

    return Starlette(routes=[route("/bare", BareWorkflow.run),
                             route("/bare-searchable", SearchableBareWorkflow.run, **SEARCHABLE_START)])


async def run_worker(address: str, queue: str) -> None:
    # Run as the isolator worker runs its workflows (workers/worker.py), so that only the service's
    # own work differs.
    worker = Worker(await connect(address), task_queue=queue,
                    workflows=[BareWorkflow, SearchableBareWorkflow, CreateShapedBareWorkflow, WarmShapedBareWorkflow],
                    activities=[do_nothing],
                    max_concurrent_local_activities=100, workflow_runner=WORKFLOW_RUNNER)
    await worker.run()


async def serve_http(address: str, queue: str, port: int) -> None:
    # uvicorn's defaults, as `isolator api` runs with
    server = uvicorn.Server(uvicorn.Config(http_app(await connect(address), queue), host="127.0.0.1", port=port))
    await server.serve()


if __name__ == "__main__":
    # As `bench.baseline`, not `__main__`: the worker finds the workflow by its module's name.
    from bench import baseline

    address, queue = os.environ["TEMPORAL_ADDRESS"], os.environ["BENCH_QUEUE"]
    if sys.argv[1:] == ["worker"]:
        asyncio.run(baseline.run_worker(address, queue))
    elif sys.argv[1:] == ["http"]:
        asyncio.run(baseline.serve_http(address, queue, int(os.environ["BENCH_BASELINE_PORT"])))
    else:
        raise SystemExit("usage: python -m bench.baseline worker|http")
