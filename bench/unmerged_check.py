"""A check, not a benchmark: on random repositories, every branch the survey's batch proves unmerged
(`unmerged_by_paths`) must be one the per-branch checks (`merge_proof`) find unmerged too.

Run: .venv/bin/python -m bench.unmerged_check [REPOSITORIES] [FIRST_SEED]

Each repository gets 4-9 branches of random work (files added, changed, deleted, folders moved, in
nested folders), each taken into main at random by a squash, by cherry-picks, or not at all, with
reverts, and with main and older branches moving on after. It prints how many branches were proven
unmerged, and stops at the first one wrongly proven.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from activities.git.runner import run_git
from activities.providers.worktree.merged import merge_proof, read_refs, unmerged_by_paths
from bench.repos import IDENTITY

FOLDERS = ["", "src/", "src/a/", "docs/", "lib/x/"]


def git(repository: Path, *args: str) -> str:
    return run(repository, *args).stdout.strip()


def run(repository: Path, *args: str) -> subprocess.CompletedProcess:
    """git, whatever it answers: a random change may be refused (a conflict, nothing to move)."""
    return subprocess.run(["git", *IDENTITY, *args], cwd=repository, capture_output=True, text=True)


def work(repository: Path, chance: random.Random) -> None:
    """One commit of 1-3 random changes (possibly none that git keeps: then an empty commit)."""
    for _ in range(chance.randint(1, 3)):
        files = git(repository, "ls-files").splitlines()
        roll = chance.random()
        if roll < 0.2 and files:
            git(repository, "rm", "-q", "-f", chance.choice(files))
        elif roll < 0.3 and files:
            folder = chance.choice([folder for folder in FOLDERS if folder])
            target = chance.choice(["moved/", "src/b/", "lib/y/"])
            (repository / target).mkdir(parents=True, exist_ok=True)
            for name in files:
                if name.startswith(folder) and "/" not in name[len(folder):]:
                    git(repository, "mv", name, target + name[len(folder):])
        else:
            path = repository / f"{chance.choice(FOLDERS)}f{chance.randrange(8)}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"line {chance.randrange(5)}\n" for _ in range(chance.randint(1, 6))))
            git(repository, "add", str(path.relative_to(repository)))
    git(repository, "commit", "-q", "--allow-empty", "-m", "work")


def make(repository: Path, chance: random.Random) -> list[str]:
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    for name in ("src/a/f1.txt", "docs/f2.txt", "f3.txt", "lib/x/f4.txt"):
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text("base\n")
    git(repository, "add", ".")
    git(repository, "commit", "-q", "-m", "root")
    branches: list[str] = []
    for number in range(chance.randint(4, 9)):
        branch = f"b{number}"
        git(repository, "checkout", "-q", "-b", branch, "main")
        for _ in range(chance.randint(1, 3)):
            work(repository, chance)
        branches.append(branch)
        git(repository, "checkout", "-q", "main")
        roll = chance.random()
        if roll < 0.2:  # a squash merge
            git(repository, "merge", "-q", "--squash", branch)
            git(repository, "commit", "-q", "--allow-empty", "-m", "squash")
        elif roll < 0.35:  # a rebase merge: the same patches, one by one, as far as they apply
            for commit in git(repository, "rev-list", "--reverse", f"main..{branch}").splitlines():
                if run(repository, "cherry-pick", "--allow-empty", commit).returncode != 0:
                    git(repository, "cherry-pick", "--abort")
                    break
        elif roll < 0.45:
            git(repository, "revert", "--no-edit", "HEAD")
        git(repository, "reset", "-q", "--hard")
        if chance.random() < 0.5:
            work(repository, chance)
        if chance.random() < 0.3:  # more work on an older branch, after main moved on
            git(repository, "checkout", "-q", chance.choice(branches))
            work(repository, chance)
            git(repository, "checkout", "-q", "main")
    return branches


async def check(seed: int) -> tuple[int, int, int, list[str]]:
    with tempfile.TemporaryDirectory(prefix="isolator-unmerged-") as folder:
        repository = Path(folder) / "repository"
        branches = make(repository, random.Random(seed))
        refs = await read_refs(run_git, repository, "main")
        tips = {branch: refs.tips[f"refs/heads/{branch}"] for branch in branches if branch not in refs.ancestry_merged}
        proven = await unmerged_by_paths(run_git, repository, refs, set(tips.values()))
        merged, wrong = 0, []
        for branch, tip in tips.items():
            proof = await merge_proof(run_git, repository, refs, branch, tip)
            merged += proof is not None
            if tip in proven and proof is not None:
                wrong.append(f"seed {seed}, {branch}: {proof}")
        return len(tips), len(proven), merged, wrong


async def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    branches = proven = merged = 0
    for seed in range(first, first + count):
        asked, found, by_patch, wrong = await check(seed)
        branches, proven, merged = branches + asked, proven + found, merged + by_patch
        if wrong:
            raise SystemExit("proven unmerged, but merged: " + "; ".join(wrong))
    print(f"{count} repositories: {branches} branches not merged by ancestry, {merged} of them merged by patch or "
          f"squash; {proven} proven unmerged by the batch, none wrongly")


if __name__ == "__main__":
    asyncio.run(main())
