"""A run's output written to its row in batches (activities/runs/records.py), on a real PostgreSQL: a
write stopped halfway (the once-a-second flusher cancelled at the run's end) is neither lost nor
overtaken, and the final flush waits for it."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg

from activities.runs.records import Capture, RunRecords


async def a_run(db: asyncpg.Pool) -> str:
    codebase = await db.fetchval("INSERT INTO codebases (name, canonical_path, default_branch, host) "
                                 "VALUES ('app', '/src/app', 'main', 'h') RETURNING id")
    environment = await db.fetchval(
        """INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name)
           VALUES ($1, 'task', 'x', '/w/app/task-x', 'task-x') RETURNING id""", codebase)
    run_id = str(uuid.uuid4())
    await RunRecords(db).queued(run_id, str(environment), "test", "chat-1", "go")
    return run_id


async def test_a_write_cancelled_halfway_is_finished_before_the_next_one(db: asyncpg.Pool) -> None:
    run_id = await a_run(db)
    capture = Capture(RunRecords(db), run_id, "output")
    async with db.acquire() as holder, holder.transaction():
        # The row is locked: the first write waits in PostgreSQL, as a slow database would keep it.
        await holder.execute("SELECT 1 FROM agent_runs WHERE id = $1 FOR UPDATE", uuid.UUID(run_id))
        await capture.add("first ")
        ticking = asyncio.create_task(capture.flush())
        await asyncio.sleep(0.2)
        ticking.cancel()  # as the run's end stops the flusher
        await asyncio.gather(ticking, return_exceptions=True)
        await capture.add("second")
        final = asyncio.create_task(capture.flush())
        await asyncio.sleep(0.2)
        assert not final.done(), "the final flush waits for the write in flight"
    await final

    assert await db.fetchval("SELECT output FROM agent_runs WHERE id = $1", uuid.UUID(run_id)) == "first second"
