"""HOST_WAIT_HOURS bounds a message's wait for its codebase's host: past it, the message is answered that
it was not run, and it does not run when the host comes back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.agents import command
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster

WAIT_HOURS = 0.002  # 7.2 s


async def test_a_message_not_run_within_host_wait_hours_is_answered_and_never_runs(
        make_cluster: MakeCluster, tmp_path: Path) -> None:
    record = tmp_path / "runs.txt"
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1, env={
        "AGENT_COMMAND": command("recorder", str(record), "0"), "SANDBOX_WRITABLE_PATHS": str(tmp_path),
        "HOST_WAIT_HOURS": str(WAIT_HOURS)})
    await cluster.register("hostB", make_repo(cluster.host("hostB").folder / "repos" / "project-b"))
    await cluster.say("bounded", "/clone project-b")
    await cluster.say("bounded", "first")

    cluster.kill("hostB")
    sent = await cluster.send("bounded", "too-late")
    told = await cluster.reply_containing("bounded", "did not come back within", seconds=60)
    assert "`project-b` (hostB)" in told and "HOST_WAIT_HOURS" in told and "was not run" in told
    result = await cluster.temporal.get_workflow_handle(sent["workflowId"]).result()
    assert result["outcome"] == "host_gone", result

    await cluster.restart("hostB")
    await asyncio.sleep(3)  # time for a run, if one were coming
    assert "too-late" not in (record.read_text() if record.exists() else "")
