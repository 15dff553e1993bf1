"""Another conversation's archived or uncommitted files cannot be read from a run (the red team's row 7).

A run's view of the repository has the shared object store as its alternate, so a program in the
sandbox can list and print every object there (`git cat-file --batch-all-objects --batch`). What an
archive holds beyond its branch's commit is written into the codebase's archive store instead, which
the run never sees; a restore still brings it all back, without putting it into the shared store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.environments.isolation import IsolationActivities
from activities.git.working_trees import changes_since, working_tree
from activities.sandbox import bubblewrap
from activities.sandbox.user_programs import run_user_program, user_environment
from isolator.contracts.worktree import RemoveWorktreeInput, RestoreWorktreeInput
from isolator.settings import Settings, load_settings
from tests.archives import archive_store_of
from tests.worktrees import add_worktree, codebase_of

SECRET = "uncommitted secret of conversation one"
ONE = "0b6d8a52-7c1e-4b55-9d43-4a8f3b0c9e01"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The real sandbox, as a worker configures it (restored after the test)."""
    settings = load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees",
                             workspace_path_setting=tmp_path / "workspace", host="test-host", sandbox="on")
    monkeypatch.setattr(bubblewrap, "_current", None)
    assert bubblewrap.configure(settings).problem is None, "these tests need bubblewrap"
    return settings


async def everything_a_run_reads(worktree: Path, store: Path) -> str:
    """What a program run in `worktree`'s sandbox prints: every object it can enumerate, its refs, and
    whether the archive store's folder is there for it."""
    script = (f"git cat-file --batch-all-objects --batch; git for-each-ref; "
              f"test -e {store} && echo the-store-is-seen; echo sandboxed=$IS_SANDBOX")
    chunks: list[bytes] = []

    async def keep(chunk: bytes) -> None:
        chunks.append(chunk)

    finished = await run_user_program(["sh", "-c", script], worktree, user_environment({}), 60.0, on_output=keep)
    assert finished.exit_code == 0, b"".join(chunks)
    return b"".join(chunks).decode(errors="replace")


async def test_a_run_cannot_read_another_conversations_archived_files_and_the_archive_still_restores(
    settings: Settings, repo: Path
) -> None:
    one = add_worktree(settings, repo, "one", commits=1)
    (one / "secret.txt").write_text(f"{SECRET}, untracked\n")
    (one / "file0.txt").write_text(f"{SECRET}, an unstaged edit\n")
    isolation = IsolationActivities(settings)
    removed = await isolation.remove_worktree(
        RemoveWorktreeInput(codebase_of(repo), str(one), "one", force=True, environment_id=ONE))
    assert (removed.outcome, removed.branch_outcome) == ("removed", "archived"), removed.message
    two = add_worktree(settings, repo, "two")
    store = archive_store_of(repo)

    seen = await everything_a_run_reads(two, store)

    assert "sandboxed=1" in seen and "content 1\n" in seen, "the run reads the shared object store"
    assert "one work 0" in seen, "the branch of conversation one is shared: its commits are readable"
    assert SECRET not in seen
    assert "refs/isolator" not in seen and "the-store-is-seen" not in seen

    restored = await isolation.restore_worktree(
        RestoreWorktreeInput(codebase_of(repo), str(one), "one", removed.archive_refs[0], removed.branch_tip))

    assert restored.outcome == "restored", restored.message
    assert (one / "secret.txt").read_text() == f"{SECRET}, untracked\n"
    assert (one / "file0.txt").read_text() == f"{SECRET}, an unstaged edit\n"
    assert SECRET not in await everything_a_run_reads(two, store), "a restore writes files, not shared objects"
    assert os.listdir(store / "objects" / "pack"), "the archive's objects are in its store"


async def test_a_run_cannot_read_the_files_another_conversations_run_left_uncommitted(
    settings: Settings, repo: Path, tmp_path: Path
) -> None:
    """An agent run reads its worktree's state before and after (what it changed, for its summary):
    those snapshots' objects go into a store of the run's own, not into the shared one."""
    one = add_worktree(settings, repo, "one")
    two = add_worktree(settings, repo, "two")
    before = await working_tree(one, tmp_path / "snapshots")
    (one / "secret.txt").write_text(f"{SECRET}, written by its agent\n")

    changes = await changes_since(one, before, tmp_path / "snapshots")

    assert changes.files == ["secret.txt"]
    assert SECRET not in await everything_a_run_reads(two, archive_store_of(repo))
