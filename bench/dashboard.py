"""The dashboard: its codebase page with a thousand environments, and an agent's line from the moment
it is printed to the moment the run page's event stream delivers it.

The environments are planted rows (a codebase on another host, so no git or worker touches them);
the page reads only the database. The line's way is the real one: agent, worker, PostgreSQL's NOTIFY,
the API's server-sent events, read here by an HTTP client as the browser's EventSource reads them
(tests/dashboard/test_browser.py checks the same in chromium)."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import asyncpg

from bench.agents import STREAMER, set_agent
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import say, start_conversation
from bench.stack import Stack

PAGE_P50_MS = 300.0
LINE_P50_MS = 1000.0
CODEBASE = "dashboard-scale"

_PLANT = """
WITH codebase AS (
  INSERT INTO codebases (name, canonical_path, default_branch, host) VALUES ($1, '/srv/dashboard-scale', 'main',
         'bench-elsewhere') RETURNING id
), planted AS (
  INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name, status,
                                      setup_state, created_at, created_by_platform, disk_bytes, merge_proof)
  SELECT codebase.id, 'thread', 'dash-' || n, '/srv/worktrees/dashboard-scale/thread-' || n, 'thread-' || n,
         CASE WHEN n % 10 = 0 THEN 'hibernated' ELSE 'active' END, 'ready', now() - make_interval(days => n % 40),
         'slack', (n * 7919 % 500) * 1048576, CASE WHEN n % 13 = 0 THEN 'merged: squash-merged into main' END
  FROM codebase, generate_series(1, $2) AS n
  RETURNING id, workflow_id, codebase_id, created_at
)
INSERT INTO conversations (platform, platform_conversation_id, codebase_id, environment_id, last_activity_at)
SELECT 'slack', 'C0DASH:' || workflow_id, codebase_id, id, created_at FROM planted
"""


async def codebase_page(stack: Stack, environments: int, runs: int) -> list[Figure]:
    """GET /codebases/{name} of `environments` environments: the first page as it opens (sorted by
    last activity), sorted by disk, filtered by branch, and a later page; timed at the client, so the
    figure holds the server's time plus a loopback HTTP hop."""
    connection = await asyncpg.connect(stack.database_url)
    try:
        await connection.execute(_PLANT, CODEBASE, environments)
        await connection.execute(
            """INSERT INTO agent_runs (id, environment_id, platform, conversation_id, message, status)
               SELECT gen_random_uuid(), id, 'slack', 'C0DASH:' || workflow_id, 'bench', 'running'
               FROM isolation_environments WHERE branch_name LIKE 'thread-%7' AND workflow_id LIKE 'dash-%'""")
    finally:
        await connection.close()
    views = {"opened": {}, "by disk": {"sort": "disk"}, "filtered": {"branch": "thread-12"},
             "page 10": {"page": "10"}}

    async def page(params: dict[str, str]) -> None:
        response = await stack.api.get(f"/codebases/{CODEBASE}", params=params)
        response.raise_for_status()

    samples: dict[str, list[float]] = {name: [] for name in views}
    for _ in range(runs):  # interleaved: the machine's noise falls on every view alike
        for name, params in views.items():
            samples[name].append(await timed(lambda: page(params)))
    opened = Latency.of(samples["opened"])
    figures = [Figure(f"dashboard: codebase page, {environments} environments", str(opened),
                      f"target p50 <= {PAGE_P50_MS:.0f} ms", verdict(opened.p50 <= PAGE_P50_MS),
                      {name: vars(Latency.of(values)) for name, values in samples.items()})]
    figures += [Figure(f"  {name}", str(Latency.of(values))) for name, values in samples.items() if name != "opened"]
    return figures


async def line_to_page(stack: Stack, codebase_id: str, repository: Path, lines: int) -> list[Figure]:
    """From a line the agent prints to its arrival in the run page's event stream."""
    await start_conversation(stack, "dashboard-live", repository)
    await set_agent(stack, codebase_id, [sys.executable, "-c", STREAMER, str(lines)])
    run_id = (await say(stack, "dashboard-live", "stream"))["agentRunId"]
    latencies = []
    async with stack.api.stream("GET", f"/runs/{run_id}/events", timeout=None) as events:
        event = ""
        async for line in events.aiter_lines():
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event == "output":
                arrived = time.time()
                for match in re.finditer(r"^line \d+ ([\d.]+)$", json.loads(line[len("data: "):]), re.M):
                    latencies.append((arrived - float(match[1])) * 1000)
            elif line.startswith("data: ") and event == "final":
                break
    assert len(latencies) == lines, latencies
    figure = Latency.of(latencies)
    return [Figure("dashboard: agent's line to the run page (SSE)", str(figure), f"target p50 <= {LINE_P50_MS:.0f} ms",
                   verdict(figure.p50 <= LINE_P50_MS), {"latency": vars(figure)})]
