"""The message paths: reuse and create latency, throughput under 50 concurrent conversations, memory."""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable

from api.dispatch import dispatch_message
from bench.baseline import REUSE_PATH_ACTIVITIES, BareWorkflow, CreateShapedBareWorkflow
from bench.figures import Figure, Latency, timed, verdict
from bench.stack import Stack
from isolator.contracts.message import MessageInput


async def say(stack: Stack, conversation: str, text: str = "bench") -> dict[str, Any]:
    """One message through the test adapter, answered when its workflow has finished."""
    response = await stack.api.post("/test/message", params={"wait": "true"},
                                    json={"conversationId": conversation, "message": text})
    response.raise_for_status()
    return response.json()["result"]


async def say_direct(stack: Stack, conversation: str) -> None:
    """The same message started from a Temporal client, as the baseline is: no HTTP hop."""
    message = MessageInput(platform="test", conversation_id=conversation, text="bench",
                           message_key=uuid.uuid4().hex, default_host=stack.host)
    await (await dispatch_message(stack.temporal, stack.task_queue, message)).result()


async def bare(stack: Stack) -> None:
    await stack.temporal.execute_workflow(BareWorkflow.run, REUSE_PATH_ACTIVITIES, id=f"bare-{uuid.uuid4().hex}",
                                          task_queue=stack.baseline_queue)


async def bare_http(stack: Stack) -> None:
    """The bare workflow behind the same HTTP hop as the test adapter: request, start, wait, answer."""
    (await stack.baseline_http.post("/bare")).raise_for_status()


async def searchable_bare_http(stack: Stack) -> None:
    """The bare workflow with the message workflow's search attributes and summary, over the same hop."""
    (await stack.baseline_http.post("/bare-searchable")).raise_for_status()


async def start_conversation(stack: Stack, conversation: str, repository: Path) -> dict[str, Any]:
    """Link a new conversation to a registered repository and give it its worktree."""
    await say(stack, conversation, f"/clone {repository}")
    result = await say(stack, conversation)
    assert result["outcome"] == "created", result
    return result


async def reuse(stack: Stack, repository: Path, runs: int) -> list[Figure]:
    """Each path against the bare workflow reached the same way, samples interleaved so that the
    machine's noise falls on all of them alike."""
    await start_conversation(stack, "reuse", repository)
    http, bare_over_http, searchable_over_http, direct, baseline = [], [], [], [], []
    for _ in range(runs):
        http.append(await timed(lambda: say(stack, "reuse")))
        bare_over_http.append(await timed(lambda: bare_http(stack)))
        searchable_over_http.append(await timed(lambda: searchable_bare_http(stack)))
        direct.append(await timed(lambda: say_direct(stack, "reuse")))
        baseline.append(await timed(lambda: bare(stack)))
    http_figure, bare_http_figure = Latency.of(http), Latency.of(bare_over_http)
    searchable_figure = Latency.of(searchable_over_http)
    direct_figure, bare_figure = Latency.of(direct), Latency.of(baseline)
    ratio = http_figure.p50 / bare_http_figure.p50
    searchable_ratio = http_figure.p50 / searchable_figure.p50
    direct_ratio = direct_figure.p50 / bare_figure.p50
    return [
        Figure("reuse, POST /test/message?wait=true", str(http_figure), f"bare workflow over HTTP: {bare_http_figure}",
               verdict(ratio <= 1.3 and http_figure.p50 <= 60),
               {"latency": vars(http_figure), "baseline": vars(bare_http_figure), "ratio_p50": round(ratio, 2),
                "searchable_baseline": vars(searchable_figure), "ratio_to_searchable_p50": round(searchable_ratio, 2)}),
        Figure("  ratio to the bare workflow (p50)", f"x{ratio:.2f} (target <= 1.3, p50 <= 60 ms)"),
        Figure("  ratio to the bare workflow with the search attributes (p50)", f"x{searchable_ratio:.2f}",
               f"that workflow over HTTP: {searchable_figure}"),
        Figure("reuse, started from a client", str(direct_figure), f"bare workflow: {bare_figure}",
               verdict(direct_ratio <= 1.3),
               {"latency": vars(direct_figure), "baseline": vars(bare_figure), "ratio_p50": round(direct_ratio, 2)}),
        Figure("  ratio to the bare workflow (p50)", f"x{direct_ratio:.2f}"),
    ]


async def git_worktree_add(repository: Path, path: Path, branch: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "git", "worktree", "add", "-q", "-b", branch, "--", str(path), cwd=repository,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    _, error = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(error.decode())


async def create(stack: Stack, label: str, repository: Path, runs: int) -> list[Figure]:
    """A new conversation's first message against raw `git worktree add`, alternating; beside them,
    the create path's shape as a bare workflow (no work at all), for the part Temporal alone takes."""
    creates, raw, shaped = [], [], []
    for run in range(runs):
        conversation = f"create-{repository.name}-{run}"
        await say(stack, conversation, f"/clone {repository}")
        creates.append(await timed(lambda: say(stack, conversation)))
        target = stack.trees / "raw" / repository.name / f"raw-{run}"
        raw.append(await timed(lambda: git_worktree_add(repository, target, f"raw-{run}")))
        shaped.append(await timed(lambda: create_shaped_bare(stack)))
    create_figure, raw_figure, shaped_figure = Latency.of(creates), Latency.of(raw), Latency.of(shaped)
    # Each run's overhead against the git add timed right after it: the disk's pauses under thousands
    # of new files last longer than a message, and a pair shares them where two medians need not.
    overhead = statistics.median(create - git for create, git in zip(creates, raw))
    apart = create_figure.p50 - raw_figure.p50
    return [
        Figure(f"create, {label}", str(create_figure), f"git worktree add: {raw_figure}", verdict(overhead <= 100),
               {"latency": vars(create_figure), "baseline": vars(raw_figure), "overhead_p50": round(overhead, 1),
                "p50s_apart": round(apart, 1)}),
        Figure("  overhead (p50 of each create minus its git add)", f"{overhead:.1f} ms (target <= 100); "
               f"the two p50s are {apart:.1f} ms apart",
               f"create-shaped bare workflow from a client: {shaped_figure}", data={"shaped": vars(shaped_figure)}),
    ]


async def create_shaped_bare(stack: Stack) -> None:
    await stack.temporal.execute_workflow(CreateShapedBareWorkflow.run, id=f"bare-create-{uuid.uuid4().hex}",
                                          task_queue=stack.baseline_queue)


async def _saturate(call: Callable[[int], Awaitable[None]], concurrency: int, seconds: float,
                    ramp: float) -> tuple[list[float], int]:
    """`concurrency` loops calling `call` for `seconds`: the latency of every call, and how many
    came back after the first `ramp` seconds and before the time was up. The rate counts only those:
    while the first calls are all on their way nothing comes back, and the calls still out at the
    end are not counted, so a window counted from its start under-reads a slower side more."""
    latencies: list[float] = []
    started = time.monotonic()
    counted_from, deadline = started + ramp, started + seconds
    counted = 0

    async def loop(index: int) -> None:
        nonlocal counted
        while time.monotonic() < deadline:
            latencies.append(await timed(lambda: call(index)))
            counted += counted_from <= time.monotonic() <= deadline

    await asyncio.gather(*(loop(index) for index in range(concurrency)))
    return latencies, counted


async def _peak_memory(stack: Stack, stop: asyncio.Event) -> dict[str, float]:
    """Peak resident memory (MiB) of each service process, sampled every 100 ms."""
    processes = stack.memory()
    peaks = {name: 0.0 for name in processes}
    while not stop.is_set():
        for name, process in processes.items():
            peaks[name] = max(peaks[name], process.memory_info().rss / 2**20)
        await asyncio.sleep(0.1)
    return peaks


# Throughput windows: each side's load runs in windows of WINDOW seconds, RAMP of them not counted.
WINDOW_SECONDS, RAMP_SECONDS = 7.0, 2.0
ORDER = ("bare", "searchable", "service", "service", "searchable", "bare")


async def throughput(stack: Stack, repository: Path, concurrency: int, seconds: float) -> list[Figure]:
    """`seconds` of counted load on each side, in windows taken in the order bare, searchable,
    service, service, searchable, bare, repeated: this machine's speed wanders by 15-30% within a
    minute (every process's CPU per message with it), and short windows in a mirrored order let
    every side meet the same moments. One window of the service's load goes first, not counted: the
    first seconds of load after a quiet spell run faster, and would go to whichever side came first."""
    conversations = [f"load-{index}" for index in range(concurrency)]
    for conversation in conversations:
        await start_conversation(stack, conversation, repository)
    counted_per_window = WINDOW_SECONDS - RAMP_SECONDS
    rounds = max(1, round(seconds / (2 * counted_per_window)))
    window = seconds / (2 * rounds) + RAMP_SECONDS
    stop = asyncio.Event()
    sampler = asyncio.create_task(_peak_memory(stack, stop))
    loads = {side: _Load() for side in ORDER}
    calls = {"bare": lambda index: bare_http(stack), "searchable": lambda index: searchable_bare_http(stack),
             "service": lambda index: say(stack, conversations[index])}
    await _saturate(calls["service"], concurrency, window, RAMP_SECONDS)  # the warm-up
    for _ in range(rounds):
        for side in ORDER:
            loads[side].add(*await _saturate(calls[side], concurrency, window, RAMP_SECONDS),
                            window - RAMP_SECONDS)
    baseline, searchable, measured = loads["bare"], loads["searchable"], loads["service"]
    stop.set()
    peaks = await sampler
    rate, baseline_rate, searchable_rate = measured.rate, baseline.rate, searchable.rate
    load_figure, bare_figure = Latency.of(measured.latencies), Latency.of(baseline.latencies)
    return [
        Figure(f"throughput, reuse, {concurrency} conversations", f"{rate:.1f} msg/s",
               f"bare workflow over HTTP: {baseline_rate:.1f}/s", verdict(rate >= 0.8 * baseline_rate),
               {"rate": round(rate, 1), "baseline_rate": round(baseline_rate, 1), "seconds": seconds,
                "windows": {"seconds": round(window, 1), "ramp_not_counted": RAMP_SECONDS, "per_side": 2 * rounds},
                "searchable_baseline_rate": round(searchable_rate, 1)}),
        Figure("  ratio to the bare workflow", f"x{rate / baseline_rate:.2f} (target >= 0.8)"),
        Figure("  ratio to the bare workflow with the search attributes", f"x{rate / searchable_rate:.2f}",
               f"that workflow over HTTP: {searchable_rate:.1f}/s"),
        Figure("  latency under load", str(load_figure), f"bare workflow: {bare_figure}",
               data={"latency": vars(load_figure), "baseline": vars(bare_figure)}),
        Figure("peak memory during throughput", ", ".join(f"{name} {mib:.0f} MiB" for name, mib in peaks.items()),
               data={"peak_rss_mib": {name: round(mib, 1) for name, mib in peaks.items()}}),
    ]


class _Load:
    """The calls of one side of the throughput case, over its windows."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.counted = 0  # calls that came back inside the counted part of their window
        self.seconds = 0.0

    def add(self, latencies: list[float], counted: int, seconds: float) -> None:
        self.latencies += latencies
        self.counted += counted
        self.seconds += seconds

    @property
    def rate(self) -> float:
        return self.counted / self.seconds
