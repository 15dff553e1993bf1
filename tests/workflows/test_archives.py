"""Every removal undoable, end to end on real git, PostgreSQL and Temporal: a worktree with staged,
unstaged and untracked changes goes by each path (a close, the cleanup, a forced remove, making room at
the limit, hibernation), and comes back byte for byte on its branch; the retention prunes old archives."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from activities.git.disk_usage import disk_usage
from api.dispatch import start_message
from isolator.settings import Settings
from tests.agent_runs import run_of
from tests.agents import command as agent_command
from tests.archives import archive_refs, fingerprint, make_a_mess
from tests.chat_commands import command, environment_of, say_one
from tests.conftest import Stack
from tests.gitrepos import branches
from tests.lifecycle import backdate, commit_file, merge_into_main
from workflows.chat import archive_texts, worktree_texts
from workflows.chat.worktree_texts import human_size


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """With `parametrize("settings", [{...}], indirect=True)`, those settings changed."""
    return settings.model_copy(update=getattr(request, "param", {}))


async def gone(stack: Stack, path: Path) -> None:
    """Until the worktree at `path` is removed and its row says so."""
    for _ in range(400):
        status = await stack.db.fetchval("SELECT status FROM isolation_environments WHERE working_path = $1 "
                                         "ORDER BY created_at DESC LIMIT 1", str(path))
        if not path.exists() and status == "destroyed":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} is still there")


async def row_of(stack: Stack, environment_id: str) -> dict:
    return dict(await stack.db.fetchrow("SELECT * FROM isolation_environments WHERE id = $1",
                                        uuid.UUID(environment_id)))


async def worktree_with_a_mess(stack: Stack, repo: Path, conversation: str, commit: bool = True) -> tuple[dict, dict]:
    await stack.register(repo)
    created = (await stack.say(conversation, "work on this"))["result"]
    assert created["outcome"] == "created", created
    path = Path(created["workingPath"])
    if commit:
        commit_file(path, "committed.txt")
    make_a_mess(path)
    return created, fingerprint(path)


async def run_scheduled_cleanup(stack: Stack) -> dict:
    """What the `isolation-cleanup` schedule starts."""
    result = await stack.temporal.execute_workflow(
        "CleanupWorkflow", id=f"cleanup-{uuid.uuid4().hex[:8]}", task_queue=stack.settings.task_queue,
    )
    return result


async def close(stack: Stack, conversation: str) -> None:
    closing = await start_message(stack.settings, stack.temporal, platform="test", conversation_id=conversation,
                                  text="", message_key=f"{conversation}:closed", kind="closed")
    assert (await closing.result()).outcome == "closed"


async def test_a_close_archives_the_dirty_worktree_and_restore_brings_it_back(stack: Stack, repo: Path) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-close")
    path, branch = Path(created["workingPath"]), created["branch"]

    await close(stack, "arch-close")
    await gone(stack, path)

    row = await row_of(stack, created["environmentId"])
    assert (row["status"], row["removal_reason"]) == ("destroyed", "closed")
    assert row["archive_ref"] == f"refs/isolator/archive/{created['environmentId']}"
    assert row["branch_tip"] == before["head"] and branch in branches(repo)
    listing = await say_one(stack, "arch-close", "/worktree removed")
    assert f"`{branch}`: removed " in listing and "(closed)" in listing
    assert await say_one(stack, "arch-close", f"/worktree why {branch}") == listing

    reply = await say_one(stack, "arch-close", f"/worktree restore {branch}")

    assert reply.startswith(f"Restored `{branch}` at `{path}`"), reply
    assert fingerprint(path) == before
    restored = await environment_of(stack, "arch-close")
    assert restored is not None and restored["status"] == "active" and str(restored["id"]) != created["environmentId"]
    assert restored["metadata"]["restored_from"] == created["environmentId"]
    assert (await row_of(stack, created["environmentId"]))["restored_as"] == restored["id"]
    assert "Nothing of `project` waits to be restored: the 1 worktree(s) removed in the last 30 days are back" \
        in await say_one(stack, "arch-close", "/worktree removed")
    # the restored environment is an ordinary one: the next message reuses it
    assert (await stack.say("arch-close", "go on"))["result"]["outcome"] == "reused"


async def test_the_stale_cleanup_takes_a_dirty_worktree_and_restore_brings_it_back(stack: Stack, repo: Path) -> None:
    # (a stale one with unpushed commits stays: test_cleanup_rules)
    created, before = await worktree_with_a_mess(stack, repo, "arch-stale", commit=False)
    path, branch = Path(created["workingPath"]), created["branch"]
    await backdate(stack, "arch-stale", 30)

    replies = await command(stack, "arch-admin", "/worktree cleanup stale")

    assert any(f"{branch} (30 days inactive)" in reply for reply in replies), replies
    assert not path.exists()
    assert (await say_one(stack, "arch-stale", f"/worktree restore {branch}")).startswith(f"Restored `{branch}`")
    assert fingerprint(path) == before


async def test_a_forced_remove_is_archived_and_restore_brings_it_back(stack: Stack, repo: Path) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-force")
    path, branch = Path(created["workingPath"]), created["branch"]
    refused = await say_one(stack, "arch-force", "/worktree remove")
    assert "has uncommitted changes, so it was not removed" in refused and path.exists()

    removed = await say_one(stack, "arch-force", "/worktree remove --force")

    assert f"archived as `refs/isolator/archive/{created['environmentId']}`" in removed, removed
    assert f"`/worktree restore {branch}`" in removed
    assert not path.exists() and branch in branches(repo)
    assert (await say_one(stack, "arch-force", f"/worktree restore {branch}")).startswith(f"Restored `{branch}`")
    assert fingerprint(path) == before


@pytest.mark.parametrize("settings", [{"max_worktrees_per_codebase": 1}], indirect=True)
async def test_making_room_at_the_limit_is_archived_and_restore_brings_it_back(stack: Stack, repo: Path) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-room")
    path, branch = Path(created["workingPath"]), created["branch"]
    merge_into_main(repo, branch)  # merged, and still dirty: making room takes it
    await backdate(stack, "arch-room", 20)  # and no live conversation holds it

    other = (await stack.say("arch-other", "something else"))["result"]

    assert other["outcome"] == "created", other
    assert not path.exists()
    reason = (await row_of(stack, created["environmentId"]))["removal_reason"]
    assert reason.startswith("merged: "), reason
    await say_one(stack, "arch-other", "/worktree remove")  # room for the restore
    assert (await say_one(stack, "arch-room", f"/worktree restore {branch}")).startswith(f"Restored `{branch}`")
    assert fingerprint(path) == before


async def test_a_budget_two_worktrees_exceed_hibernates_the_least_recently_active_and_its_next_message_wakes_it(
    stack: Stack, repo: Path
) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-old")
    path, branch = Path(created["workingPath"]), created["branch"]
    recent = (await stack.say("arch-new", "newer work"))["result"]
    await backdate(stack, "arch-old", 2)  # the least recently active: the first to hibernate
    sizes = [disk_usage(Path(worktree), 10)[0] for worktree in (path, recent["workingPath"])]
    stack.settings.disk_budget_gb = (sum(sizes) - 1) / 1024**3  # both exceed it, either alone does not

    result = await run_scheduled_cleanup(stack)

    [report] = result["codebases"]
    assert report["hibernated"] == [f"{branch} ({human_size(sizes[0])})"], (report, sizes)
    assert not path.exists() and branch in branches(repo)
    row = await row_of(stack, created["environmentId"])
    assert row["status"] == "hibernated" and row["archive_ref"] is not None
    newer = await row_of(stack, recent["environmentId"])
    assert newer["status"] == "active" and newer["disk_bytes"] == sizes[1] and Path(recent["workingPath"]).is_dir()
    listed = (await stack.api.get(f"/api/environments/{recent['environmentId']}")).json()
    assert listed["disk_bytes"] == sizes[1] and listed["disk_measured_at"] is not None

    status = await say_one(stack, "arch-old", "/status")
    assert f"Worktree: `{path}` (branch `{branch}`), hibernated to keep within the disk budget" in status
    assert "Worktrees: 1/25" in status, "a hibernated environment does not count against the limit"
    assert not path.exists(), "a command does not wake it"

    again = (await stack.say("arch-old", "back to it"))["result"]

    assert again["outcome"] == "reused", again
    assert again["replies"][0].startswith(f"Restored `{branch}` at `{path}`"), again["replies"]
    assert fingerprint(path) == before
    assert (await row_of(stack, created["environmentId"]))["status"] == "active"


async def test_the_retention_prunes_an_old_archive_and_keeps_a_young_one(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    old = (await stack.say("arch-ret-old", "old"))["result"]
    young = (await stack.say("arch-ret-young", "young"))["result"]
    commit_file(Path(old["workingPath"]), "unmerged.txt")
    for conversation in ("arch-ret-old", "arch-ret-young"):
        await say_one(stack, conversation, "/worktree remove --force")
    await stack.db.execute("UPDATE isolation_environments SET archived_at = now() - interval '31 days' WHERE id = $1",
                           uuid.UUID(old["environmentId"]))

    result = await run_scheduled_cleanup(stack)

    [report] = result["codebases"]
    assert report["pruned"] == [f"{old['branch']} (branch kept)"], report
    assert archive_refs(repo) == [f"refs/isolator/archive/{young['environmentId']}"]
    assert old["branch"] in branches(repo), "its unmerged commit keeps the branch"
    assert (await row_of(stack, old["environmentId"]))["archive_pruned_at"] is not None
    listing = await say_one(stack, "arch-ret-young", "/worktree removed")
    assert f"`{young['branch']}`" in listing and f"`{old['branch']}`" not in listing
    refused = await say_one(stack, "arch-ret-old", f"/worktree restore {old['branch']}")
    assert refused.startswith("No removed worktree of `project` named"), refused


async def test_a_name_removed_twice_restores_the_latest_and_lists_the_other(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "arch-twice", "/worktree create twice")
    first = await environment_of(stack, "arch-twice")
    await say_one(stack, "arch-twice", "/worktree remove")
    await say_one(stack, "arch-twice", "/worktree restore task-twice")
    second = await environment_of(stack, "arch-twice")
    (Path(second["working_path"]) / "later.txt").write_text("the second life\n")
    await say_one(stack, "arch-twice", "/worktree remove --force")
    await stack.db.execute("UPDATE isolation_environments SET restored_as = NULL WHERE id = $1", first["id"])

    reply = await say_one(stack, "arch-twice", "/worktree restore task-twice")

    assert reply.startswith("Restored `task-twice`"), reply
    assert (Path(second["working_path"]) / "later.txt").read_text() == "the second life\n"
    assert f"- `{first['id']}`: removed " in reply


async def test_restore_through_the_api_and_what_get_shows(stack: Stack, repo: Path) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-api")
    path = Path(created["workingPath"])
    deleted = await stack.api.delete(f"/api/environments/{created['environmentId']}", params={"force": "true"})
    assert deleted.status_code == 200, deleted.text
    shown = (await stack.api.get(f"/api/environments/{created['environmentId']}")).json()
    assert shown["archive_refs"] == [f"refs/isolator/archive/{created['environmentId']}"]
    assert shown["branch_tip"] == before["head"] and shown["status"] == "destroyed"

    restored = await stack.api.post(f"/api/environments/{created['environmentId']}/restore")
    again = await stack.api.post(f"/api/environments/{created['environmentId']}/restore")
    unknown = await stack.api.post(f"/api/environments/{uuid.uuid4()}/restore")
    malformed = await stack.api.post("/api/environments/not-an-id/restore")

    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert (body["outcome"], body["working_path"]) == ("restored", str(path))
    assert fingerprint(path) == before
    assert again.status_code == 200 and again.json()["outcome"] == "already_restored"
    assert again.json()["environment_id"] == body["environment_id"]
    assert unknown.status_code == 404 and "no archive to restore" in unknown.json()["detail"]
    assert malformed.status_code == 422
    new = (await stack.api.get(f"/api/environments/{body['environment_id']}")).json()
    assert new["status"] == "active" and new["archive_refs"] == shown["archive_refs"]


async def test_a_message_after_the_close_returns_to_the_archived_worktree(stack: Stack, repo: Path) -> None:
    """An issue reopened, a Discord thread that archived itself and is written in again: the work goes on
    in its worktree as it was. One removed on purpose stays removed: the next message starts afresh."""
    created, before = await worktree_with_a_mess(stack, repo, "arch-back")
    path, branch = Path(created["workingPath"]), created["branch"]
    await close(stack, "arch-back")
    await gone(stack, path)

    back = (await stack.say("arch-back", "where were we?"))["result"]

    assert (back["outcome"], back["workingPath"], back["branch"]) == ("restored", str(path), branch), back
    assert back["replies"][0].startswith(f"Restored `{branch}` at `{path}`"), back["replies"]
    assert fingerprint(path) == before
    assert (await stack.say("arch-back", "and now?"))["result"]["outcome"] == "reused"

    await say_one(stack, "arch-back", "/worktree remove --force")
    fresh = (await stack.say("arch-back", "start over"))["result"]
    assert fresh["outcome"] == "created", fresh
    assert not (Path(fresh["workingPath"]) / "new-staged.txt").exists()


async def test_the_disk_budget_never_hibernates_an_environment_while_its_agent_runs(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    await stack.register(repo)
    idle = (await stack.say("arch-idle", "hello"))["result"]
    stack.settings.agent_command_line = agent_command("recorder", str(tmp_path / "runs.log"), "30")
    busy = (await stack.say("arch-busy", "a long job"))["result"]
    for _ in range(600):
        if (await run_of(stack, busy["agentRunId"]))["status"] == "running":
            break
        await asyncio.sleep(0.05)
    await backdate(stack, "arch-busy", 5)  # the least recently active, but its agent is at work
    stack.settings.disk_budget_gb = 1e-9  # every worktree is over it

    result = await run_scheduled_cleanup(stack)

    [report] = result["codebases"]
    assert [entry.split(" (")[0] for entry in report["hibernated"]] == [idle["branch"]], report
    assert Path(busy["workingPath"]).is_dir() and not Path(idle["workingPath"]).exists()
    assert (await row_of(stack, busy["environmentId"]))["status"] == "active"
    assert (await run_of(stack, busy["agentRunId"]))["status"] == "running", "the run goes on"
    await say_one(stack, "arch-busy", "/stop")


async def test_restore_and_removed_answer_bad_input_with_how_to_use_them_and_change_nothing(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    await command(stack, "arch-bad", "/worktree create kept")
    for text in ("/worktree restore", "/worktree restore a b", "/worktree restore --all"):
        assert await say_one(stack, "arch-bad", text) == archive_texts.RESTORE_USAGE, text
    assert await say_one(stack, "arch-bad", "/worktree restore nope") == archive_texts.nothing_named("nope", "project")
    assert await say_one(stack, "arch-bad", "/worktree removed now") == worktree_texts.USAGE
    assert "Nothing of `project` can be restored" in await say_one(stack, "arch-bad", "/worktree removed")
    rows = await stack.db.fetch("SELECT status FROM isolation_environments")
    assert [row["status"] for row in rows] == ["active"] and archive_refs(repo) == []


async def test_a_hibernated_environment_gone_stale_is_removed_and_its_next_message_returns_to_it(
    stack: Stack, repo: Path
) -> None:
    created, before = await worktree_with_a_mess(stack, repo, "arch-sleepy")
    path, branch = Path(created["workingPath"]), created["branch"]
    stack.settings.disk_budget_gb = 1e-9
    await run_scheduled_cleanup(stack)
    assert (await row_of(stack, created["environmentId"]))["status"] == "hibernated"
    stack.settings.disk_budget_gb = None
    await backdate(stack, "arch-sleepy", 20)  # past the stale threshold (14), where no platform closes it

    result = await run_scheduled_cleanup(stack)

    [report] = result["codebases"]
    assert report["removed"] == [f"{branch} (20 days inactive, hibernated)"], report
    row = await row_of(stack, created["environmentId"])
    assert (row["status"], row["removal_reason"]) == ("destroyed", "20 days inactive")
    assert row["archive_ref"] == f"refs/isolator/archive/{created['environmentId']}" and branch in branches(repo)
    back = (await stack.say("arch-sleepy", "still there?"))["result"]
    assert (back["outcome"], back["workingPath"]) == ("restored", str(path)), back
    assert fingerprint(path) == before
