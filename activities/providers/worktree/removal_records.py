"""What each removal reported, kept for a day under `WORKTREE_BASE/.removed/`.

A removal whose worker died after the worktree was gone but before its report reached Temporal is
tried again; that retry finds nothing on disk. With this record it answers with the first attempt's
report (removed, the branch deleted or archived) instead of "already gone": a removal happens once,
and says so once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path

from isolator.contracts.worktree import RemovalReport

KEPT_SECONDS = 24 * 3600  # far beyond any retry of a removal


class RemovalRecords:
    def __init__(self, worktree_base: Path) -> None:
        self.folder = worktree_base / ".removed"

    def recall(self, path: Path) -> RemovalReport | None:
        try:
            return RemovalReport(**json.loads(self._file(path).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def keep(self, path: Path, report: RemovalReport) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        scratch = self._file(path).with_suffix(".tmp")
        scratch.write_text(json.dumps(dataclasses.asdict(report)))
        scratch.replace(self._file(path))
        self._prune()

    def forget(self, path: Path) -> None:
        """A new worktree at `path`: an old removal of it says nothing about the next one."""
        self._file(path).unlink(missing_ok=True)

    def _file(self, path: Path) -> Path:
        return self.folder / f"{hashlib.sha256(str(path).encode()).hexdigest()[:32]}.json"

    def _prune(self) -> None:
        cutoff = time.time() - KEPT_SECONDS
        for record in self.folder.glob("*.json"):
            try:
                if record.stat().st_mtime < cutoff:
                    record.unlink()
            except OSError:
                pass
