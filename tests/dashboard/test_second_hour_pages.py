"""The dashboard as a team meets it in its second hour (issue 47): the overview lists the runs going on
now (item 10), a restored worktree's page links its earlier runs (item 11), the disk figure is the one
`/status` says, with its "not measured yet" note once a page (item 12), and the run page's words on its
diffs say what it shows (item 15)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from tests.agent_runs import finished_run, run_of
from tests.agents import command
from tests.approvals import recorded_request
from tests.conftest import Stack

UNMEASURED_NOTE = "the next scheduled cleanup measures every worktree"


async def _until_running(stack: Stack, run_id: str) -> None:
    for _ in range(1200):
        if (await run_of(stack, run_id))["status"] == "running":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never ran")


async def test_the_overview_lists_the_runs_running_queued_and_waiting_each_linked(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = command("ticker", "1000", "0.2")
    await stack.register(repo)
    running = (await stack.say("now-running", "a long job"))["result"]
    await _until_running(stack, running["agentRunId"])
    queued = (await stack.say("now-running", "the next job"))["result"]  # one run at a time in a worktree
    await recorded_request(stack.db, "test", "now-waiting", "NOWWAIT1", requested_by="alice")
    waiting = await stack.db.fetchval("SELECT run_id FROM approvals WHERE code = 'NOWWAIT1'")

    page = (await stack.api.get("/")).text
    table = page.split('id="runs"', 1)[1].split("</table>", 1)[0]
    rows = dict(re.findall(r'<tr data-run="([^"]+)" data-status="([^"]+)"', table))
    assert rows == {running["agentRunId"]: "running", queued["agentRunId"]: "queued", str(waiting): "waiting"}, table
    for run_id, conversation in ((running["agentRunId"], "test:now-running"), (queued["agentRunId"], "test:now-running"),
                                 (str(waiting), "test:now-waiting")):
        row = table.split(f'data-run="{run_id}"', 1)[1].split("</tr>", 1)[0]
        assert f'href="/runs/{run_id}"' in row and conversation in row, row
        assert re.search(r'<td class="for" title="since [^"]+">\d+ (s|min)</td>', row), row
    assert "<br><span class=\"muted\">git push</span>" in table, "what the waiting run waits for"
    card = page.split('data-codebase="project"', 1)[1]
    assert "1 running</span>, <span class=\"runs-queued\">1 queued" in card and 'href="#runs"' in card
    assert re.search(r'<dd class="last-activity" title="[^"]+">\d+ s ago</dd>', card), "the codebase's last activity"


async def test_a_restored_worktree_s_page_links_its_earlier_runs(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = command("ticker", "1", "0")
    await stack.register(repo)
    first = (await stack.say("restored-runs", "a first job"))["result"]
    await finished_run(stack, first["agentRunId"])
    removed = await stack.api.delete(f"/api/environments/{first['environmentId']}", params={"force": "true"})
    assert removed.status_code == 200, removed.text
    restored = await stack.api.post(f"/api/environments/{first['environmentId']}/restore")
    assert restored.status_code == 200, restored.text
    again = restored.json()["environment_id"]
    assert again != first["environmentId"]

    page = (await stack.api.get(f"/environments/{again}")).text
    assert "No run yet" not in page
    assert f'<a id="restored-from" href="/environments/{first["environmentId"]}">' in page
    earlier = page.split(f'<tr data-run="{first["agentRunId"]}">', 1)[1].split("</tr>", 1)[0]
    assert f'href="/runs/{first["agentRunId"]}"' in earlier and "before its restore" in earlier, earlier


async def test_the_disk_figure_is_the_one_status_says_and_its_note_comes_once(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = ""  # worktrees, no runs
    await stack.register(repo)
    for name in ("disk-a", "disk-b", "disk-c"):
        await stack.say(name)

    overview, codebase = (await stack.api.get("/")).text, (await stack.api.get("/codebases/project")).text
    assert "0 KiB" not in overview, "nothing measured is no figure"
    assert overview.count(UNMEASURED_NOTE) == 1 and codebase.count(UNMEASURED_NOTE) == 1, codebase
    assert codebase.count('<td class="disk" title="">not measured yet</td>') == 3

    status = (await stack.say("disk-a", "/status"))["result"]["replies"][0]
    said = re.search(r"Disk: (.+?) in all", status).group(1)
    overview, codebase = (await stack.api.get("/")).text, (await stack.api.get("/codebases/project")).text
    disk = overview.split('<dd class="disk">', 1)[1].split("</dd>", 1)[0]
    assert disk.startswith(f"{said} "), (said, disk)
    assert UNMEASURED_NOTE not in overview and UNMEASURED_NOTE not in codebase


async def test_the_run_page_says_a_file_a_command_changed_unfolds_to_git_s_diff(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = command("changer")  # writes and commits work-1.txt, with a shell
    await stack.register(repo)
    run_id = (await stack.say("words-diff", "a change"))["result"]["agentRunId"]
    await finished_run(stack, run_id)
    page = (await stack.api.get(f"/runs/{run_id}")).text
    changes = page.split('<section id="changes"', 1)[1].split("</section>", 1)[0]
    assert '<details class="edit"><summary><code>work-1.txt</code></summary>' in changes, "what the page shows"
    assert "listed, not shown" not in changes
    assert "git's diff" in changes and "a command the agent ran" in changes, changes
