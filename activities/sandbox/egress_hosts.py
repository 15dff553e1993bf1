"""The allow-list of one sandboxed run (isolator/egress_rules.py says what an entry allows): the
operator's SANDBOX_ALLOWED_HOSTS, the model APIs and package indexes the agents' and tools' own
settings name (the service's variables, the operator's Codex and Claude Code configuration), the tools' default indexes, and the codebase's git host."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from activities.git.runner import run_git
from activities.sandbox.processes import brief_output
from isolator.egress_rules import Entry, entries_of_environment, git_host_entry, unique, url_entry

_tool_indexes: tuple[Entry, ...] | None = None
_git_hosts: dict[Path, tuple[int, Entry | None]] = {}  # per common git dir: its config's mtime, its host


async def entries_of_run(allowed: tuple[Entry, ...], common_git_dir: Path | None,
                         agent_configs: tuple[Path, ...] = ()) -> tuple[Entry, ...]:
    git_host = await _git_host(common_git_dir) if common_git_dir is not None else None
    return unique([*allowed, *entries_of_environment(os.environ, agent_configs), *await _tools_default_indexes(),
                   *([git_host] if git_host else [])])


async def _git_host(common_git_dir: Path) -> Entry | None:
    """The host of the codebase's `origin`, read once per version of its config."""
    try:
        changed = (common_git_dir / "config").stat().st_mtime_ns
    except OSError:
        return None
    known = _git_hosts.get(common_git_dir)
    if known is None or known[0] != changed:
        result = await run_git("config", "--file", str(common_git_dir / "config"), "--get", "remote.origin.url",
                               check=False)
        known = _git_hosts[common_git_dir] = (changed, git_host_entry(result.stdout.strip() or None))
    return known[1]


async def _tools_default_indexes() -> tuple[Entry, ...]:
    """Where pip and npm install from when nothing else is configured, as they say themselves; asked
    once per process."""
    global _tool_indexes
    if _tool_indexes is None:
        urls = _pip_default_index()
        npm = shutil.which("npm")
        if npm:
            urls.append(await _npm_registry(npm))
        _tool_indexes = tuple(entry for entry in map(url_entry, urls) if entry is not None)
    return _tool_indexes


def _pip_default_index() -> list[str]:
    try:
        from pip._internal.models.index import PyPI  # pip's own default; no other public name for it
    except ImportError:
        return []
    return [PyPI.url, f"https://{PyPI.file_storage_domain}/"]


async def _npm_registry(npm: str) -> str:
    answer = await brief_output([npm, "config", "get", "registry"], 30)
    return answer[1].decode(errors="replace").strip() if answer is not None else ""
