"""Hostile worktree names and conversation ids through the test adapter: a clear answer, and no path
outside WORKTREE_BASE is ever created or removed (checked by listing the disk before and after)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from tests.conftest import Stack
from tests.gitrepos import branches, first_replies, worktree_paths
from tests.security.fuzzing import disk
from workflows.chat import worktree_texts
from workflows.naming import thread_branch

BAD_NAMES = [
    "..", "../../etc", "a/../../b", "..%2f..%2fetc", "-rf", "--force", "-", "@{-1}", "a@{u}", "foo.lock", ".hidden",
    "a..b", "name.", "x" * 300, "x" * 51, "bell\x07name", "esc\x1b[31m", "\u202eevil", "$(id)", "`id`", "a:b", "a~1",
]
ALLOWED = "Use up to 50 ASCII letters (a-z, A-Z), digits, `.`, `_` or `-`"


def outside(paths: set[str], stack: Stack, repo: Path) -> set[str]:
    """The paths not under WORKTREE_BASE, nor git's own records in the repository."""
    allowed = (stack.settings.worktree_base.resolve(), repo.resolve() / ".git")
    return {path for path in paths if not any(Path(path).resolve().is_relative_to(root) for root in allowed)}


async def active_environments(stack: Stack) -> int:
    return await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'")


async def test_bad_worktree_names_are_refused_with_what_is_allowed_and_touch_no_disk(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    before = disk(stack.tmp_path)

    for name in BAD_NAMES:
        answer = await stack.say("names-1", f"/worktree create {name}")
        assert answer["result"]["outcome"] == "command", (name, answer)
        assert answer["result"]["replies"] == [worktree_texts.invalid_task_name(name)], name
        assert ALLOWED in answer["result"]["replies"][0]
        assert answer["result"]["replies"][0].isprintable(), "no control or direction character is echoed"
    for command in ("/worktree remove ../../etc", "/worktree remove --force ..", "/worktree link task-../../etc"):
        (reply,) = (await stack.say("names-1", command))["result"]["replies"]
        assert reply.startswith("No active worktree") or reply.startswith("Usage"), (command, reply)

    assert disk(stack.tmp_path) == before, "a refused name changes nothing on disk"
    assert await active_environments(stack) == 0
    assert branches(repo) == ["main"] and worktree_paths(repo) == []

    # The same check sees a worktree that is made: a good name lands inside the base, and only there.
    (reply,) = (await stack.say("names-1", "/worktree create fine-name"))["result"]["replies"]
    made = stack.settings.worktree_base.resolve() / "project" / "task-fine-name"
    assert str(made) in reply and (made / "file0.txt").is_file()
    assert str(made) in disk(stack.tmp_path) - before
    assert outside(disk(stack.tmp_path) - before, stack, repo) == set()
    assert before - disk(stack.tmp_path) == set(), "nothing was removed"


async def test_text_no_store_can_hold_is_refused_by_the_adapter(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    before = disk(stack.tmp_path)
    raw = [
        b'{"conversationId": "names-2", "message": "/worktree create a\\u0000b"}',
        b'{"conversationId": "names-2", "message": "/worktree create \\ud800"}',
        b'{"conversationId": "\\udfff", "message": "hello"}',
    ]
    for body in raw:
        response = await stack.api.post("/test/message", params={"wait": "true"}, content=body,
                                        headers={"content-type": "application/json"})
        assert response.status_code == 422, (body, response.text)
        (error,) = response.json()["detail"]
        assert error["loc"][:2] == ["body", "message" if b"names-2" in body else "conversationId"], error
        assert "NUL" in error["msg"] or "unicode" in error["msg"].lower(), error
    assert disk(stack.tmp_path) == before
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0


async def test_hostile_conversation_ids_are_refused_or_kept_inside_the_base(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    base = stack.settings.worktree_base.resolve()
    before = disk(stack.tmp_path)

    refused = ["x" * 257, "a\x07b", "\x1b[31m", "line\nbreak", "tab\there", "a\x00b", "\x7f", ""]
    for conversation in refused:
        response = await stack.api.post("/test/message", json={"conversationId": conversation, "message": "hello"})
        assert response.status_code == 422, (conversation, response.text)
        (error,) = response.json()["detail"]
        assert error["loc"] == ["body", "conversationId"] and error["msg"], error

    # Ids are only ever hashed into a branch name: these work, each in its own thread worktree in the base.
    accepted = ["../../etc", "..", "a/../../b", "-rf", "--force", "@{-1}", "/absolute", "x" * 256, "\u202eevil"]
    for conversation in accepted:
        answer = await stack.say(conversation, "hello")
        branch = thread_branch(f"test:{conversation}")
        assert answer["result"]["outcome"] == "created", (conversation, answer)
        assert answer["result"]["branch"] == branch
        assert answer["result"]["workingPath"] == str(base / "project" / branch)
        listed = await stack.api.get("/test/messages/" + quote(conversation, safe="").replace(".", "%2E"))
        assert listed.status_code == 200, listed.text  # an id with `/` is read back too
        assert [m["message"] for m in listed.json()["messages"]] == first_replies(branch, repo)

    after = disk(stack.tmp_path)
    assert outside(after - before, stack, repo) == set(), "nothing made outside the worktree base"
    assert before - after == set(), "nothing removed"
    assert sorted(worktree_paths(repo)) == sorted(str(base / "project" / thread_branch(f"test:{c}")) for c in accepted)
