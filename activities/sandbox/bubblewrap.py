"""The bubblewrap sandbox every user program (the agent, the set-up, the teardown) runs in.

Inside, the program sees an allow-list of the host (activities/sandbox/view.py): the system's
programs and libraries and `/etc` without its secrets, read-only; the folders its own program needs
and the operator's SANDBOX_READABLE_PATHS, read-only; its worktree writable at its own path, the
`writable_paths` its caller names (the conversation's session folder), and a per-run view of its
repository (activities/sandbox/git_view.py); its own `/tmp` and HOME, empty tmpfs of SANDBOX_TMP_MB
each; a fresh `/dev`; its own PID namespace with its own `/proc` (the worker and its environment are
not there to read or signal). What a readable or writable folder holds of the service's own
(ISOLATOR_DATA_DIR, WORKTREE_BASE, WORKSPACE_PATH, the database's socket folder, the repository's main
checkout) is hidden behind empty folders. It runs in a user namespace with no capability, whoever
starts it: even as root it cannot mount, unmount what hides those, or remount anything writable.
Its network (SANDBOX_NETWORK): `egress`, a namespace of its own whose only way out is the service's
proxy (activities/sandbox/egress_proxy.py); `off`, none; `open`, the host's, loopback included.

`--die-with-parent` and the PID namespace make the run's end the end of all it started: when the
namespace's first process ends, the kernel kills every other one in it, wherever it moved to.

SANDBOX=on (the default) needs bubblewrap to work here: `configure` tries it once when the worker
starts, and checks from inside that the program keeps no capability; where either fails, it says so,
and every user program is refused with that reason.
SANDBOX=off runs them as before, and `/status` keeps saying so.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Literal

from activities.sandbox import egress_hosts, egress_proxy, git_view, view
from activities.sandbox.view import Mount
from isolator.egress_rules import Entry, parse_entry
from isolator.settings import Settings

log = logging.getLogger(__name__)

BWRAP = "bwrap"
# Set in every sandboxed program's environment. Claude Code reads it: as root it allows its
# autonomous mode (`bypassPermissions`) only when told it is sandboxed. Drivers may read `sandboxed()`.
SANDBOX_VARIABLES = {"IS_SANDBOX": "1"}
OFF_WARNING = ("Warning: SANDBOX=off: the agent, set-up and teardown run unconfined, as the service's own user: "
               "they can read other worktrees, the service's data and its processes' secrets.")

NETWORK_STATUS = {
    "egress": "Sandbox: on, network: egress (the allowed hosts only)",
    "off": "Sandbox: on, network: off",
    "open": "Warning: SANDBOX_NETWORK=open: sandboxed programs reach every address, the host's loopback (this "
            "service's API, Temporal, the database) and the cloud's metadata included.",
}


@dataclass(frozen=True)
class Sandbox:
    enabled: bool  # SANDBOX=on
    problem: str | None  # why bubblewrap cannot work here (with SANDBOX=on: every program is refused)
    network: Literal["egress", "open", "off"]
    hidden: tuple[Path, ...]  # folders the program sees empty
    writable: tuple[Path, ...]  # SANDBOX_WRITABLE_PATHS: folders every program may write (shared caches)
    scratch: Path  # where the per-run git views are made (unseen inside)
    allowed: tuple[Entry, ...] = ()  # SANDBOX_ALLOWED_HOSTS
    readable: tuple[Path, ...] = ()  # SANDBOX_READABLE_PATHS: the operator's toolchains
    system: tuple[Mount, ...] = ()  # the system's programs, libraries and `/etc` (view.system_mounts)
    tmp_bytes: int = 1 << 30  # SANDBOX_TMP_MB: the size of its `/tmp` and of its HOME
    agent_home: Path | None = None  # where the operator's Codex and Claude Code folders are by default

    @property
    def status(self) -> str:
        """What `/status` says about the sandbox: its network, or what is wrong."""
        if not self.enabled:
            return OFF_WARNING
        if self.problem:
            return f"Warning: the sandbox cannot start here, so no agent, set-up or teardown runs: {self.problem}"
        return f"{NETWORK_STATUS[self.network]}\n{self.seen}"

    @property
    def seen(self) -> str:
        """What a run sees of the host, in one line (docs/sandbox.md has the whole table)."""
        secrets = sum(1 for mount in self.system if mount.target.parts[1:2] == ("etc",) and mount.target != Path("/etc"))
        folders = view.path_folders(os.environ.get("PATH", ""))
        toolchains = ", ".join(f"`{path}`" for path in folders if not any(other in path.parents for other in folders))
        readable = ", ".join(f"`{path}`" for path in self.readable) or "none"
        return (f"A run sees: its worktree and a copy of its git dir; the system read-only (`/usr`, `/etc` without "
                f"{secrets} secret files); a HOME and `/tmp` of its own ({self.tmp_bytes >> 20:,} MiB each); "
                f"the worker's PATH toolchains ({toolchains or 'none'}); SANDBOX_READABLE_PATHS ({readable}); "
                "nothing else of the host.")


_current: Sandbox | None = None


def configure(settings: Settings) -> Sandbox:
    """The sandbox of this worker, tried once; says at start when it cannot work."""
    global _current
    scratch = _scratch_root(settings)
    hidden = tuple(dict.fromkeys([settings.data_dir, settings.worktree_base, settings.workspace_path,
                                  *view.database_socket_folders(settings.database_url, os.environ)]))
    enabled = settings.sandbox == "on"
    system = tuple(view.system_mounts()) if enabled else ()
    problem = probe(settings.sandbox_network, system) if enabled else None
    _current = Sandbox(enabled, problem, settings.sandbox_network, hidden, tuple(settings.sandbox_writable), scratch,
                       tuple(map(parse_entry, settings.sandbox_extra_hosts)), tuple(settings.sandbox_readable),
                       system, settings.sandbox_tmp_mb << 20, settings.agent_home)
    if not enabled:
        log.warning(OFF_WARNING)
    elif problem:
        log.error("the sandbox cannot start, so no agent, set-up or teardown will run: %s. "
                  "Install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user "
                  "namespaces, or set SANDBOX=off to run them unconfined", problem)
    return _current


def _agent_configs(agent_home: Path | None) -> tuple[Path, ...]:
    """The operator's Codex and Claude Code folders, as activities/runs/agents/configs.py finds them."""
    return tuple(Path(os.environ[variable]).expanduser() if os.environ.get(variable) else agent_home / name
                 for variable, name in (("CODEX_HOME", ".codex"), ("CLAUDE_CONFIG_DIR", ".claude"))
                 if os.environ.get(variable) or agent_home is not None)


def _scratch_root(settings: Settings) -> Path:
    """The per-run git views: in memory where there is a tmpfs (made and removed in well under a
    millisecond, where a loaded disk takes tens), else in the data folder."""
    shared_memory = Path("/dev/shm")
    if shared_memory.is_dir() and os.access(shared_memory, os.W_OK | os.X_OK):
        return shared_memory / f"isolator-sandbox-{os.getuid()}"
    return settings.data_dir / "sandbox-runs"


def _own_folder(path: Path) -> None:
    """`path` made if missing, and refused unless it is a folder of this user's that only it can
    enter: in a shared /dev/shm, another user could have made it first."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = path.lstat()
    if not path.is_dir() or path.is_symlink() or status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise SandboxRefused(f"{path} is not a private folder of this user's")


def current() -> Sandbox:
    if _current is None:
        raise RuntimeError("the sandbox is not configured: the worker calls bubblewrap.configure(settings)")
    return _current


def sandboxed() -> bool:
    """Whether user programs of this worker run in the sandbox (a driver's permission mode may follow it)."""
    return _current is not None and _current.enabled and _current.problem is None


def probe(network: str = "off", system: Sequence[Mount] | None = None) -> str | None:
    """None when bubblewrap can make a sandbox here whose program keeps no capability, else what went wrong."""
    if shutil.which(BWRAP) is None:
        return "bubblewrap (`bwrap`) is not installed"
    if network == "egress" and shutil.which("perl") is None:
        return "SANDBOX_NETWORK=egress needs perl (Debian's perl-base) for its bridge; or set SANDBOX_NETWORK=off"
    try:
        result = subprocess.run([BWRAP, *base_arguments(own_network=True, system=system), "--", "cat", "/proc/self/status"],
                                capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not run: {error}"
    if result.returncode != 0:
        return "bwrap failed: " + (result.stderr.decode(errors="replace").strip() or f"exit code {result.returncode}")
    kept = capabilities_kept(result.stdout.decode(errors="replace"))
    if kept:
        return f"a program in the sandbox keeps capabilities ({kept}): this bubblewrap ignores --cap-drop"
    return None


def capabilities_kept(status: str) -> str:
    """The non-empty capability sets of a `/proc/<pid>/status` (effective, permitted, bounding, ambient)."""
    sets = dict(line.split(":", 1) for line in status.splitlines() if line.startswith("Cap"))
    kept = [f"{name} {sets[name].strip()}" for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb")
            if int(sets.get(name, "1"), 16)]
    return ", ".join(kept)


def base_arguments(own_network: bool, system: Sequence[Mount] | None = None, tmp_bytes: int | None = None) -> list[str]:
    """A root of bubblewrap's own with the system in it (`system`, by default as view.py finds it),
    a fresh `/dev`, its own `/proc` and `/tmp`, in namespaces of its own."""
    # A user namespace without capabilities: started by root, bubblewrap would otherwise leave the
    # program nearly all of root's (mount, umount of what hides the service's data, raw sockets).
    arguments = ["--unshare-user", "--cap-drop", "ALL",
                 "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent"]
    mounts = [*(view.system_mounts() if system is None else system), Mount("--dev", Path("/dev")),
              Mount("--proc", Path("/proc")), Mount("--tmpfs", Path("/tmp"), size=tmp_bytes)]
    for mount in mounts:
        arguments += mount.arguments()
    return [*arguments, "--unshare-net"] if own_network else arguments


class SandboxRefused(Exception):
    """The program cannot run: the sandbox cannot be made; the message says why and what to do."""


@dataclass
class Prepared:
    argv: list[str]
    env: dict[str, str]
    git: git_view.GitView | None
    sandboxed: bool  # argv starts bubblewrap, the leader of the program's process group


@asynccontextmanager
async def sandboxed_run(argv: list[str], cwd: Path, env: dict[str, str], writable_paths: Sequence[Path],
                        readable_paths: Sequence[Path] = (),
                        config_files: Mapping[Path, Path] | None = None) -> AsyncIterator[Prepared]:
    """`argv` wrapped in the sandbox (unchanged with SANDBOX=off); when the block ends, the
    worktree's own branch takes what the program committed on it, and the run's view goes.
    `readable_paths`: what the program itself needs (view.program_folders of the operator's command);
    `config_files`: the operator's files, each bound read-only at its place inside (key) from outside (value)."""
    sandbox = current()
    if not sandbox.enabled:
        yield Prepared(argv, env, None, sandboxed=False)
        return
    if sandbox.problem:
        raise SandboxRefused(f"the sandbox cannot start here ({sandbox.problem}); install bubblewrap, "
                             "or set SANDBOX=off to run user programs unconfined")
    writable = [Path(path).absolute() for path in [*sandbox.writable, *writable_paths]]
    for path in writable:
        if path in sandbox.hidden or path == sandbox.scratch or sandbox.scratch in path.parents:
            raise ValueError(f"{path} holds the service's data: it cannot be writable in the sandbox")
        path.mkdir(parents=True, exist_ok=True)
    _own_folder(sandbox.scratch)
    scratch = Path(tempfile.mkdtemp(dir=sandbox.scratch))
    egress: egress_proxy.Egress | None = None
    try:
        try:
            # SANDBOX_WRITABLE_PATHS aside: the operator's, and the tests keep their repositories there.
            git = git_view.prepare(cwd, scratch, [cwd.absolute(), *map(Path.absolute, map(Path, writable_paths))])
        except (git_view.UntrustedGitLayout, OSError) as error:
            raise SandboxRefused(f"the worktree's git layout cannot be trusted: {error}") from None
        if sandbox.network == "egress":
            entries = await egress_hosts.entries_of_run(sandbox.allowed, git.common if git else None,
                                                        _agent_configs(sandbox.agent_home))
            egress = await egress_proxy.open_egress(entries, scratch, str(cwd))
            argv, env = egress.wrap(argv), {**env, **egress.environment}
        readable = [*sandbox.readable, *view.path_folders(env.get("PATH", "")), *readable_paths]
        seen = Seen(cwd.absolute(), writable, readable, dict(config_files or {}),
                    Path(env["HOME"]) if env.get("HOME", "/") != "/" else None)
        yield Prepared([BWRAP, *arguments(sandbox, seen, git, egress), "--", *argv],
                       _inside_environment(env), git, sandboxed=True)
    finally:
        if egress is not None:
            await egress.close()
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class Seen:
    """What one run sees beyond the system: its worktree, what it writes, reads and is configured by,
    and its HOME (an empty tmpfs)."""
    worktree: Path
    writable: list[Path]
    readable: list[Path]
    config_files: dict[Path, Path]  # inside -> outside, read-only
    home: Path | None


def arguments(sandbox: Sandbox, seen: Seen, git: git_view.GitView | None,
              egress: egress_proxy.Egress | None = None) -> list[str]:
    """The mounts, outer folders first, so that a deeper one wins: a writable folder may hold a
    hidden one (which stays hidden), a hidden one may hold the worktree (which is seen)."""
    hidden = list(sandbox.hidden)  # the scratch needs nothing: it lies in /dev/shm (a new /dev inside) or the data dir
    if git is not None and git.common.name == ".git" and git.common.parent != seen.worktree:
        hidden.append(git.common.parent)  # the main checkout: its files are no worktree of this run's
    readable = [path for path in dict.fromkeys(seen.readable) if path.exists()
                and not any(folder in path.parents for folder in seen.readable)]
    mounts = [Mount("--ro-bind", path, str(path)) for path in readable]
    if seen.home is not None and seen.home not in seen.writable:
        mounts.append(Mount("--tmpfs", seen.home, size=sandbox.tmp_bytes))
    mounts += [Mount("--bind", path, str(path)) for path in seen.writable]
    mounts += [Mount("--tmpfs", path) for path in view.hidden_within(hidden, [*readable, *seen.writable])]
    mounts.append(Mount("--bind", seen.worktree, str(seen.worktree)))
    mounts += [Mount(option, target, str(source)) for option, source, target in (git.binds if git else [])]
    mounts += [Mount("--ro-bind", inside, str(outside)) for inside, outside in seen.config_files.items()]
    if egress is not None:
        mounts.append(Mount("--ro-bind", egress_proxy.INSIDE, str(egress.folder)))
    arguments = base_arguments(sandbox.network != "open", sandbox.system, sandbox.tmp_bytes)
    for mount in sorted(mounts, key=lambda mount: len(mount.target.parts)):
        arguments += mount.arguments()
    # The root itself (bubblewrap's tmpfs, holding the mount points) is read-only: what the program
    # may write is only what is bound or mounted writable on it.
    return [*arguments, "--remount-ro", "/", "--chdir", str(seen.worktree)]


def _inside_environment(env: dict[str, str]) -> dict[str, str]:
    inside = {**env, **SANDBOX_VARIABLES}
    if "TMPDIR" in inside:
        inside["TMPDIR"] = "/tmp"  # its own /tmp; the worker's TMPDIR may be hidden
    return inside
