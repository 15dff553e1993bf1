"""The `isolation-cleanup` schedule as `isolator worker` processes leave it: one schedule for all
hosts, created by the first, updated to each later one's CLEANUP_INTERVAL_HOURS, a pause kept."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import suppress
from datetime import timedelta
from pathlib import Path
from typing import Callable, Iterator

import pytest
from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    ScheduleHandle,
    ScheduleOverlapPolicy,
)

from isolator.settings import Settings
from tests.schedules import schedules_named
from workers.postgres import EmbeddedPostgres
from workers.schedule import SCHEDULE_ID
from workers.temporal_server import TemporalDevServer

# Upper bounds, far above the usual (about 10 s to start and 3 s to stop on a loaded 2-core machine).
WORKER_READY_TIMEOUT = 180.0
WORKER_STOP_TIMEOUT = 60.0


class WorkerProcess:
    """`isolator worker` as a host runs it, its log in a file; always killed at teardown."""

    def __init__(self, log: Path, **env: str) -> None:
        self.log = log
        ours = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
        environment = {key: value for key, value in os.environ.items() if key not in ours}
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "isolator"), "worker"], env={**environment, **env},
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    async def ready(self) -> None:
        """Its workers run and it has dealt with the schedule (it logs `worker on` after both)."""
        deadline = time.monotonic() + WORKER_READY_TIMEOUT
        while "worker on" not in self.text():
            if self.process.poll() is not None:
                pytest.fail(f"isolator worker exited with {self.process.returncode}:\n{self.text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"isolator worker was not ready within {WORKER_READY_TIMEOUT} s:\n{self.text()}")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        """SIGTERM, as a host's service manager stops it: it must end cleanly, exit code 0."""
        self.process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(self.process.wait, WORKER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"isolator worker did not stop within {WORKER_STOP_TIMEOUT} s:\n{self.text()}")
        assert code == 0, f"isolator worker ended with {code} on its stop:\n{self.text()}"

    def kill(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def start_worker(
    tmp_path: Path, postgres: EmbeddedPostgres, temporal_server: TemporalDevServer
) -> Iterator[Callable[..., WorkerProcess]]:
    """`start_worker(host, interval_hours, task_queue)`: a worker process on the session's servers."""
    started: list[WorkerProcess] = []

    def start(host: str, interval_hours: int, task_queue: str) -> WorkerProcess:
        started.append(WorkerProcess(
            tmp_path / f"worker-{len(started)}.log",
            DATABASE_URL=postgres.url, TEMPORAL_ADDRESS=temporal_server.address, ISOLATOR_HOST=host,
            ISOLATOR_TASK_QUEUE=task_queue, CLEANUP_INTERVAL_HOURS=str(interval_hours),
            ISOLATOR_DATA_DIR=str(tmp_path / "data"), WORKTREE_BASE=str(tmp_path / "worktrees"),
        ))
        return started[-1]

    yield start
    for worker in started:
        worker.kill()


async def listed_once(client: Client, schedule_id: str) -> None:
    """The schedule list is eventually consistent (a schedule deleted a moment ago may linger): within
    a few seconds it must show the schedule exactly once."""
    for _ in range(100):
        count = await schedules_named(client, schedule_id)
        if count == 1:
            return
        await asyncio.sleep(0.1)
    assert count == 1, f"{count} schedules named {schedule_id}"


async def test_each_worker_start_leaves_one_schedule_as_configured_and_keeps_a_pause(
    temporal: Client, schedule: ScheduleHandle, start_worker: Callable[..., WorkerProcess]
) -> None:
    """`isolator worker` processes, as hosts run them: the first creates the schedule, the next ones
    update it to their CLEANUP_INTERVAL_HOURS (schedule ids are per namespace, so all hosts share it)."""
    queue = f"isolation-{uuid.uuid4().hex[:8]}"
    first = start_worker("host-a", 6, queue)
    await first.ready()
    assert f"created schedule {SCHEDULE_ID} (every 6 h)" in first.text()
    await listed_once(temporal, SCHEDULE_ID)
    described = (await schedule.describe()).schedule
    assert [interval.every for interval in described.spec.intervals] == [timedelta(hours=6)]
    assert described.policy.overlap == ScheduleOverlapPolicy.SKIP
    action = described.action
    assert isinstance(action, ScheduleActionStartWorkflow)
    assert (action.workflow, action.id, action.task_queue) == ("CleanupWorkflow", SCHEDULE_ID, queue)

    # an operator pauses it; a second host starts while the first runs, configured with another interval
    await schedule.pause(note="investigating a failed sweep")
    second = start_worker("host-b", 3, queue)
    await second.ready()
    assert f"updated schedule {SCHEDULE_ID} (every 3 h)" in second.text()
    await listed_once(temporal, SCHEDULE_ID)
    described = (await schedule.describe()).schedule
    assert [interval.every for interval in described.spec.intervals] == [timedelta(hours=3)]
    assert (described.state.paused, described.state.note) == (True, "investigating a failed sweep")
    assert described.policy.overlap == ScheduleOverlapPolicy.SKIP
    assert isinstance(described.action, ScheduleActionStartWorkflow)
    assert described.action.task_queue == queue

    await second.stop()
    await first.stop()
    # and a restart after both stopped: still one, still paused
    third = start_worker("host-a", 6, queue)
    await third.ready()
    assert f"updated schedule {SCHEDULE_ID} (every 6 h)" in third.text()
    await listed_once(temporal, SCHEDULE_ID)
    described = (await schedule.describe()).schedule
    assert [interval.every for interval in described.spec.intervals] == [timedelta(hours=6)]
    assert described.state.paused
    await third.stop()
