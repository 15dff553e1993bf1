"""Repositories made by the benchmarks: a small one and a large one, like the projects users have."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def git(*args: str, cwd: Path, stdin: str | None = None) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True,
                          input=stdin).stdout.strip()


def make_repository(path: Path, files: int, folders: int) -> Path:
    """`files` text files spread over `folders` folders, in one commit on `main`."""
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    for number in range(files):
        folder = path / f"dir{number % folders:03d}" if folders > 1 else path
        folder.mkdir(exist_ok=True)
        (folder / f"file{number:04d}.txt").write_text(f"line {number}\n" * 20)
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "initial", cwd=path)
    return path
