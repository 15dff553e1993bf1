"""An agent's configuration is the operator's; its sessions are its conversation's.

Claude Code keeps both in one folder, CLAUDE_CONFIG_DIR (default `~/.claude`), and Codex in CODEX_HOME
(default `~/.codex`). A run's agent gets, in their place, a folder of its conversation's session
(`<session folder>/claude`, `<session folder>/codex`): writable, kept between the conversation's runs
(its sessions, logs, plans), seen by no other conversation. The operator's own files of that folder
(settings, credentials, Codex's `config.toml`) are bound into it read-only, so a run can neither
rewrite them nor read another conversation's sessions. The operator's folder is the variable's when
the worker sets it, else the one in the agent home (where `HOME=<agent home> claude login` put it).
With SANDBOX=off nothing can be bound: they are links to the operator's files.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from activities.sandbox.bubblewrap import sandboxed
from activities.sandbox.user_programs import user_environment
from activities.sandbox.view import program_folders

# Per agent: the variable naming its folder, the folder's name in a home, and the operator's files in it.
FOLDERS = {
    "claude": ("CLAUDE_CONFIG_DIR", ".claude",
               ("settings.json", ".credentials.json", "CLAUDE.md", "agents", "commands", "skills", "output-styles")),
    "codex": ("CODEX_HOME", ".codex", ("config.toml", "auth.json", "AGENTS.md", "prompts")),
}


@dataclass
class AgentFolder:
    env: dict[str, str] = field(default_factory=dict)  # the variable, naming the conversation's folder
    writable: list[Path] = field(default_factory=list)
    config_files: dict[Path, Path] = field(default_factory=dict)  # inside the conversation's folder -> the operator's


@dataclass
class AgentPlace:
    """What one call of an agent runs with: its environment and what its sandbox adds to its view."""
    env: dict[str, str]
    writable: list[Path]
    readable: list[Path]  # what its program needs (activities/sandbox/view.py)
    config_files: dict[Path, Path]


def agent_place(driver: str, argv: list[str], operators_argv: list[str], session_dir: Path, agent_home: Path,
                variables: dict[str, str]) -> AgentPlace:
    """The conversation's session folder and the agent's own folder in it, writable; HOME, for the
    named agents, the agent home's path (an empty tmpfs in the sandbox); the folders its program
    needs, from the executable it runs and the operator's arguments (never the message's words)."""
    folder = agent_folder(driver, session_dir, agent_home, sandboxed())
    variables = {**variables, **folder.env}
    if driver != "command":
        agent_home.mkdir(parents=True, exist_ok=True)
        variables["HOME"] = str(agent_home)
    env = user_environment(variables)
    return AgentPlace(env, [session_dir, *folder.writable], program_folders([argv[0], *operators_argv[1:]], env),
                      folder.config_files)


def operators_folder(driver: str, agent_home: Path) -> Path | None:
    """Where the operator keeps the agent's configuration; None for an agent without such a folder."""
    if driver not in FOLDERS:
        return None
    variable, name, _ = FOLDERS[driver]
    return Path(os.environ[variable]).expanduser() if os.environ.get(variable) else agent_home / name


def conversations_folder(driver: str, session_dir: Path) -> Path:
    return session_dir / driver


def agent_folder(driver: str, session_dir: Path, agent_home: Path, sandboxed: bool) -> AgentFolder:
    """The conversation's folder for the agent, with the operator's files in it (bound, or linked)."""
    operators = operators_folder(driver, agent_home)
    if operators is None:
        return AgentFolder()
    variable, _, names = FOLDERS[driver]
    own = conversations_folder(driver, session_dir)
    own.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in names:
        inside, outside = own / name, operators / name
        if outside.exists():
            files[inside] = outside
            if not sandboxed:
                _link(inside, outside)
        else:
            _clear(inside)
    return AgentFolder({variable: str(own)}, [own], files if sandboxed else {})


def _link(inside: Path, outside: Path) -> None:
    if inside.is_symlink() and Path(os.readlink(inside)) == outside:
        return
    _clear(inside, whatever=True)
    inside.symlink_to(outside)


def _clear(inside: Path, whatever: bool = False) -> None:
    """A file the operator no longer has: the empty place bubblewrap left for it, or a link to it."""
    if inside.is_symlink() or (inside.is_file() and (whatever or inside.stat().st_size == 0)):
        inside.unlink()
    elif inside.is_dir() and whatever:
        shutil.rmtree(inside)
    elif inside.is_dir() and not any(inside.iterdir()):
        inside.rmdir()
