"""A codebase held by another host: the message workflow runs on this host's worker, and every look
at the disk and every git command goes to the other host's task queue."""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import EventType

from isolator.settings import load_settings
from tests.conftest import Stack
from workers.worker import host_worker


async def test_a_codebase_on_another_host_gets_its_git_work_done_there(stack: Stack, repo: Path, tmp_path: Path) -> None:
    mine = stack.settings
    other = load_settings(
        database_url=mine.database_url, temporal_address=mine.temporal_address, data_dir=tmp_path / "other-data",
        worktree_base_setting=tmp_path / "other-worktrees", workspace_path_setting=tmp_path / "other-workspace",
        host=f"{mine.host}-b", task_queue=mine.task_queue, test_adapter=True,
    )
    # Only the other host's queue: every message workflow runs on this host's worker.
    async with host_worker(stack.temporal, stack.db, other):
        await stack.register(repo, host=other.host)
        first = await stack.say("far-away")
        second = await stack.say("far-away")

    assert first["result"]["outcome"] == "created", first
    assert Path(first["result"]["workingPath"]).is_relative_to(other.worktree_base.resolve())
    assert second["result"]["outcome"] == "reused", second
    history = await stack.temporal.get_workflow_handle(first["workflowId"]).fetch_history()
    on_other_host = [
        event.activity_task_scheduled_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert {(task.activity_type.name, task.task_queue.name) for task in on_other_host} >= {
        ("find_adoptable_worktree", other.host_task_queue()),
        ("create_worktree", other.host_task_queue()),
    }, "asked here first, then sent to the host that holds the codebase"
