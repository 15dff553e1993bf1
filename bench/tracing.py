"""What one trace per message costs (docs/observability.md, "Traces"): the reuse path's p50 and the
throughput of 50 conversations, with tracing on (Temporal's interceptor on the client and the
workers, the API's requests as spans, spans batched to the SDK's in-memory exporter) against off.

Each side is its own `isolator worker` and `isolator api` processes, on queues and a repository of its
own, on the stack's PostgreSQL and Temporal; the traced side's are bench/traced_service.py. Samples
alternate between the sides, and the throughput windows go off, on, on, off, so that the machine's
wandering speed falls on both.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from contextlib import AsyncExitStack

import httpx
import psutil

from bench.figures import Figure, Latency, timed, verdict
from bench.messages import RAMP_SECONDS, WINDOW_SECONDS, _Load, _saturate
from bench.repos import make_repository
from bench.stack import ISOLATOR, Stack, _ready, _spawn, _stop, free_port

ORDER = ("off", "on", "on", "off")


async def _side(stack: Stack, cleanup: AsyncExitStack, side: str) -> tuple[httpx.AsyncClient, list[psutil.Process]]:
    """One side's worker and API, started, with its repository registered."""
    run, port = uuid.uuid4().hex[:8], free_port()
    folder = stack.trees / f"tracing-{side}"
    env = {**{key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "SLACK_", "OTEL_"))},
           "DATABASE_URL": stack.database_url, "TEMPORAL_ADDRESS": stack.temporal.service_client.config.target_host,
           "ISOLATOR_DATA_DIR": str(folder / "data"), "WORKTREE_BASE": str(folder / "worktrees"),
           "WORKSPACE_PATH": str(folder / "workspace"), "ISOLATOR_HOST": socket.gethostname(),
           "ISOLATOR_TASK_QUEUE": f"bench-tracing-{side}-{run}", "ISOLATOR_TEST_ADAPTER": "1",
           "MAX_WORKTREES_PER_CODEBASE": "100000", "WARM_WORKTREES": "0"}
    program = [sys.executable, "-m", "bench.traced_service"] if side == "on" else [str(ISOLATOR)]
    processes = {f"tracing-{side}-worker": _spawn(f"tracing-{side}-worker", [*program, "worker"], env, stack.work),
                 f"tracing-{side}-api": _spawn(f"tracing-{side}-api", [*program, "api", "--port", str(port)], env,
                                               stack.work)}
    cleanup.callback(_stop, processes)
    api = await cleanup.enter_async_context(httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=120,
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=200, keepalive_expiry=2.0)))
    await _ready(api, processes, stack.work)
    repository = make_repository(folder / f"tracing-{side}-{run}", files=50, folders=1)  # names are unique
    (await api.post("/api/codebases", json={"path": str(repository)})).raise_for_status()
    return api, [psutil.Process(process.pid) for process in processes.values()]


def _cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(sum(process.cpu_times()[:2]) for process in processes)


async def _say(api: httpx.AsyncClient, conversation: str) -> None:
    response = await api.post("/test/message", params={"wait": "true"},
                              json={"conversationId": conversation, "message": "bench"})
    response.raise_for_status()


async def tracing_cost(stack: Stack, runs: int, concurrency: int, seconds: float) -> list[Figure]:
    async with AsyncExitStack() as cleanup:
        started = {side: await _side(stack, cleanup, side) for side in ("off", "on")}
        services = {side: api for side, (api, _) in started.items()}
        cpu = {side: 0.0 for side in services}  # the side's worker and API, during its throughput windows
        calls = {side: 0 for side in services}
        conversations = [f"trace-{index}" for index in range(concurrency)]
        for api in services.values():
            for conversation in conversations:
                await _say(api, conversation)  # its worktree made: what follows is reuse
        reuse: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(runs):
            for side, api in services.items():
                reuse[side].append(await timed(lambda: _say(api, conversations[0])))
        counted_per_window = WINDOW_SECONDS - RAMP_SECONDS
        rounds = max(1, round(seconds / (2 * counted_per_window)))
        window = seconds / (2 * rounds) + RAMP_SECONDS
        loads = {side: _Load() for side in services}
        for api in services.values():  # the warm-up of each, not counted
            await _saturate(lambda index: _say(api, conversations[index]), concurrency, window, RAMP_SECONDS)
        for _ in range(rounds):
            for side in ORDER:
                api, before = services[side], _cpu_seconds(started[side][1])
                latencies, counted = await _saturate(lambda index: _say(api, conversations[index]), concurrency,
                                                     window, RAMP_SECONDS)
                cpu[side] += _cpu_seconds(started[side][1]) - before
                calls[side] += len(latencies)
                loads[side].add(latencies, counted, window - RAMP_SECONDS)
    cost = {side: 1000 * cpu[side] / max(calls[side], 1) for side in cpu}  # less swayed by the machine's load
    off, on = Latency.of(reuse["off"]), Latency.of(reuse["on"])
    added, ratio = on.p50 - off.p50, loads["on"].rate / loads["off"].rate
    return [
        Figure("reuse with tracing on (in-memory exporter)", str(on), f"tracing off: {off}", verdict(added <= 2.0),
               {"latency": vars(on), "baseline": vars(off), "added_p50_ms": round(added, 1)}),
        Figure("  added p50", f"{added:+.1f} ms (target <= +2 ms)"),
        Figure(f"throughput with tracing on, reuse, {concurrency} conversations", f"{loads['on'].rate:.1f} msg/s",
               f"tracing off: {loads['off'].rate:.1f}/s", verdict(ratio >= 0.95),
               {"rate": round(loads["on"].rate, 1), "baseline_rate": round(loads["off"].rate, 1),
                "ratio": round(ratio, 3)}),
        Figure("  ratio to tracing off", f"x{ratio:.2f} (target >= 0.95)"),
        Figure("  CPU per message, worker and API", f"{cost['on']:.1f} ms", f"tracing off: {cost['off']:.1f} ms",
               data={"cpu_ms_per_message": {side: round(value, 2) for side, value in cost.items()}}),
    ]
