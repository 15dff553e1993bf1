"""Restore of an archived worktree against `git worktree add` of the same branch, on a 5,000-file
repository: the restore activity's own code (locks, archive check, staging folder, the index then the
changed files, the move, the include copy), run after run alternating with the plain add."""

from __future__ import annotations

import statistics
from pathlib import Path

from activities.providers.worktree.archive import archive_ref, save_archive
from activities.providers.worktree.restoring import WorktreeRestorer
from bench.figures import Figure, Latency, timed, verdict
from bench.repos import git, make_repository
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import RestoreWorktreeInput
from isolator.settings import load_settings

TARGET = 1.3
ENVIRONMENT = "00000000-0000-4000-8000-000000000001"


async def restore_against_add(work: Path, trees: Path, runs: int, files: int = 5000) -> list[Figure]:
    repository = make_repository(work / "restore-repo", files=files, folders=50)
    settings = load_settings(data_dir=work / "restore-data", worktree_base_setting=trees / "restore-base",
                             host="bench")
    codebase = Codebase(id="bench", name="bench", canonical_path=str(repository), default_branch="main", host="bench")
    path = settings.worktree_base / "bench" / "feature"
    plain = trees / "restore-plain"
    git("branch", "feature", cwd=repository)
    git("branch", "plain", cwd=repository)
    # The archived worktree: 50 files edited, 10 of them staged, 20 untracked, 5 deleted.
    path.parent.mkdir(parents=True)
    git("worktree", "add", "-q", "--", str(path), "feature", cwd=repository)
    for number in range(50):
        (path / f"dir{number:03d}" / f"file{number:04d}.txt").write_text(f"edited {number}\n")
    git("add", *[f"dir{number:03d}/file{number:04d}.txt" for number in range(10)], cwd=path)
    for number in range(20):
        (path / f"untracked-{number}.txt").write_text(f"new {number}\n")
    for number in range(50, 55):
        (path / f"dir{number % 50:03d}" / f"file{number:04d}.txt").unlink()
    archive = await save_archive(path, archive_ref(ENVIRONMENT), "feature")
    git("worktree", "remove", "--force", "--", str(path), cwd=repository)

    restorer = WorktreeRestorer(settings)
    request = RestoreWorktreeInput(codebase, str(path), "feature", archive.ref, archive.head)

    async def restore() -> None:
        restored = await restorer.restore(request)
        assert restored.outcome == "restored", restored.message

    async def add() -> None:
        git("worktree", "add", "-q", "--", str(plain), "plain", cwd=repository)

    restores, adds = [], []
    for _ in range(runs):
        adds.append(await timed(add))
        restores.append(await timed(restore))
        git("worktree", "remove", "--force", "--", str(plain), cwd=repository)
        git("worktree", "remove", "--force", "--", str(path), cwd=repository)
    ratio = statistics.median(restores) / statistics.median(adds)
    return [Figure(
        f"restore of a {files:,}-file worktree", str(Latency.of(restores)), f"git worktree add: {Latency.of(adds)}",
        verdict(ratio <= TARGET), {"ratio": round(ratio, 3), "target": TARGET},
    ), Figure("restore / worktree add (p50)", f"{ratio:.2f}x", f"target <= {TARGET}x", verdict(ratio <= TARGET))]
