"""ARCHIVE_PUSH=true: a removal's archive is pushed to origin under refs/isolator/archive/<id>, so a host that
lost its checkout (and the archive store in it) still restores the worktree, uncommitted files included, from
origin's copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import Stack
from tests.gitrepos import git
from tests.hosts.relocation import bare_origin


def pushed_archives(origin: Path) -> list[str]:
    return git("for-each-ref", "--format=%(refname)", "refs/isolator/archive/", cwd=origin).split()


async def last_reply(stack: Stack, conversation: str, text: str) -> str:
    await stack.say(conversation, text)
    return (await stack.replies(conversation))[-1]


async def test_a_pushed_archive_is_restored_after_the_checkout_was_lost(stack: Stack, tmp_path: Path) -> None:
    stack.settings.archive_push = True
    origin = bare_origin(tmp_path / "origin")
    registered = await stack.api.post("/api/codebases", json={"url": f"file://{origin}", "name": "project"})
    checkout = Path(registered.json()["canonical_path"])
    await stack.say("pushed", "/clone project")
    created = (await stack.say("pushed", "hello"))["result"]
    path, branch = Path(created["workingPath"]), created["branch"]
    (path / "file0.txt").write_text("edited, never committed\n")
    (path / "untracked.txt").write_text("never added\n")

    removed = await last_reply(stack, "pushed", "/worktree remove --force")

    assert "archived as" in removed and not path.exists(), removed
    assert pushed_archives(origin) == [f"refs/isolator/archive/{created['environmentId']}"]
    shutil.rmtree(checkout)  # the disk that held the checkout, its branches and its archive store is gone

    restored = await last_reply(stack, "pushed", f"/worktree restore {branch}")

    assert restored.startswith(f"Restored `{branch}`"), restored
    assert (path / "file0.txt").read_text() == "edited, never committed\n"
    assert (path / "untracked.txt").read_text() == "never added\n"
    assert git("status", "--porcelain", cwd=path).split() == ["M", "file0.txt", "??", "untracked.txt"]
    assert git("for-each-ref", "refs/isolator/incoming/", cwd=checkout) == "", "the fetched ref is moved into the store"
