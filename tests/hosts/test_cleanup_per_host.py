"""The scheduled cleanup while a host is down: the live hosts' codebases are swept, the dead host's are
reported and left for the next sweep, and the sweep ends (the schedule's next run is not held up)."""

from __future__ import annotations

import asyncio
import shutil
import uuid

from temporalio.worker import Replayer

from isolator.payloads import DATA_CONVERTER
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from workers.worker import WORKFLOWS
from workflows.cleanup import CleanupWorkflow


async def test_the_sweep_cleans_the_live_hosts_while_one_is_down(make_cluster: MakeCluster) -> None:
    cluster = await make_cluster(apis=1)
    gone: dict[str, str] = {}
    for name, host in cluster.hosts.items():
        await cluster.register(name, make_repo(host.folder / "repos" / f"project-{name}"))
        conversation = f"sweep-{name}"
        await cluster.say(conversation, f"/clone project-{name}")
        path = (await cluster.say(conversation, "hello"))["result"]["workingPath"]
        shutil.rmtree(path)  # a worktree whose folder went: the sweep marks its row destroyed
        gone[name] = path

    cluster.kill("hostB")
    sweep = f"isolation-cleanup-{uuid.uuid4().hex[:8]}"
    report = await asyncio.wait_for(cluster.temporal.execute_workflow(
        CleanupWorkflow.run, id=sweep, task_queue=cluster.task_queue), timeout=90)

    swept = {codebase.codebase: codebase for codebase in report.codebases}
    assert set(swept) == {"project-hostA", "project-hostC"}, report
    assert swept["project-hostA"].missing == [gone["hostA"]]
    assert swept["project-hostC"].missing == [gone["hostC"]]
    assert report.hosts_not_answering == ["hostB"]
    for workflow_id in (sweep, f"{sweep}@hostA", f"{sweep}@hostB"):  # the new path replays, strictly sandboxed
        history = await cluster.temporal.get_workflow_handle(workflow_id).fetch_history()
        replayed = await Replayer(workflows=WORKFLOWS, data_converter=DATA_CONVERTER).replay_workflow(history)
        assert replayed.replay_failure is None
