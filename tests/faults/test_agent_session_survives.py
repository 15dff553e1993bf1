"""A worker SIGKILLed between two messages of a conversation driven by the real Claude Code: the
session id, cost and tokens of the first run are still served, and the second message, run by the
next worker, resumes the same session (its request to the model carries the first exchange)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import httpx

from tests.agent_clis import claude_binary
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import text
from tests.faults.conftest import WorkerProcess, register


async def ended(api: httpx.AsyncClient, run_id: str, worker: WorkerProcess, seconds: float = 90) -> dict:
    for _ in range(int(seconds * 20)):
        run = (await api.get(f"/api/runs/{run_id}")).json()
        if run["status"] not in ("queued", "running"):
            return run
        assert worker.process is not None and worker.process.poll() is None, worker.log_text()[-3000:]
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end:\n{worker.log_text()[-3000:]}")


async def test_the_session_and_its_cost_survive_a_killed_worker(
    worker: WorkerProcess, api: httpx.AsyncClient, db: asyncpg.Pool, repo: Path,
) -> None:
    model = FakeAnthropicApi()
    await model.start()
    try:
        worker.extra_env.update({
            "AGENT": "claude", "AGENT_EXECUTABLE": str(claude_binary()), "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        })
        worker.start()
        await register(api, repo)
        conversation = f"survive-{uuid.uuid4().hex[:6]}"
        model.then(text("Noted: blue."))
        first = (await api.post("/test/message", params={"wait": "true"},
                                json={"conversationId": conversation, "message": "my colour is blue"})).json()
        before = await ended(api, first["result"]["agentRunId"], worker)
        assert before["status"] == "done" and before["session_id"] and before["cost_usd"] > 0

        worker.kill()
        worker.start()

        after = (await api.get(f"/api/runs/{before['id']}")).json()
        assert (after["session_id"], after["cost_usd"], after["tokens"]) == \
            (before["session_id"], before["cost_usd"], before["tokens"])
        calls = len(model.calls)
        second = (await api.post("/test/message", params={"wait": "true"},
                                 json={"conversationId": conversation, "message": "what is my colour?"})).json()
        resumed = await ended(api, second["result"]["agentRunId"], worker)
        assert resumed["status"] == "done" and resumed["session_id"] == before["session_id"]
        assert "my colour is blue" in model.calls[calls].text() and "Noted: blue." in model.calls[calls].text()
        totals = (await api.get("/api/runs/totals", params={"conversation": f"test:{conversation}"})).json()
        assert totals["runs"] == 2 and totals["cost_usd"] > before["cost_usd"]
    finally:
        await model.stop()
