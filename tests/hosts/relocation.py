"""What the tests of moves and lost disks share: an origin to clone from, and a second host's settings for a
worker run in the test's own process."""

from __future__ import annotations

import uuid
from pathlib import Path

from isolator.settings import Settings
from tests.gitrepos import git, make_repo


def bare_origin(folder: Path) -> Path:
    """A repository with a commit, and its bare clone as origin."""
    work = make_repo(folder / "work")
    origin = folder / "origin.git"
    git("clone", "-q", "--bare", str(work), str(origin), cwd=folder)
    return origin


def other_host(settings: Settings, folder: Path) -> Settings:
    """The same deployment's settings for another host, with folders of its own under `folder`."""
    other = settings.model_copy(update={
        "host": f"other-{uuid.uuid4().hex[:6]}", "worktree_base_setting": folder / "worktrees",
        "workspace_path_setting": folder / "workspace", "data_dir": folder / "data"})
    for cached in ("worktree_base", "workspace_path"):  # computed from the fields above, not copied
        other.__dict__.pop(cached, None)
    return other
