"""The bubblewrap sandbox every user program (the agent, the set-up, the teardown) runs in.

Inside, the program sees the whole system read-only, a fresh `/dev`, its own `/tmp`, its own PID
namespace with its own `/proc` (the worker and its environment are not there to read or signal), its
worktree writable at its own path, the `writable_paths` its caller names (the agent's home, a
session folder), and a per-run view of its repository (activities/sandbox/git_view.py). Hidden behind
empty folders: WORKTREE_BASE (every other worktree), ISOLATOR_DATA_DIR, WORKSPACE_PATH (the clones)
and the main checkout of its repository. It runs in a user namespace with no capability, whoever
starts it: even as root it cannot mount, unmount what hides those, or remount the system writable.
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
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Literal

from activities.sandbox import egress_hosts, egress_proxy, git_view
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

    @property
    def status(self) -> str:
        """What `/status` says about the sandbox: its network, or what is wrong."""
        if not self.enabled:
            return OFF_WARNING
        if self.problem:
            return f"Warning: the sandbox cannot start here, so no agent, set-up or teardown runs: {self.problem}"
        return NETWORK_STATUS[self.network]


_current: Sandbox | None = None


def configure(settings: Settings) -> Sandbox:
    """The sandbox of this worker, tried once; says at start when it cannot work."""
    global _current
    scratch = _scratch_root(settings)
    hidden = tuple(dict.fromkeys([settings.data_dir, settings.worktree_base, settings.workspace_path]))
    enabled = settings.sandbox == "on"
    problem = probe(settings.sandbox_network) if enabled else None
    _current = Sandbox(enabled, problem, settings.sandbox_network, hidden, tuple(settings.sandbox_writable), scratch,
                       tuple(map(parse_entry, settings.sandbox_extra_hosts)))
    if not enabled:
        log.warning(OFF_WARNING)
    elif problem:
        log.error("the sandbox cannot start, so no agent, set-up or teardown will run: %s. "
                  "Install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user "
                  "namespaces, or set SANDBOX=off to run them unconfined", problem)
    return _current


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


def probe(network: str = "off") -> str | None:
    """None when bubblewrap can make a sandbox here whose program keeps no capability, else what went wrong."""
    if shutil.which(BWRAP) is None:
        return "bubblewrap (`bwrap`) is not installed"
    if network == "egress" and shutil.which("perl") is None:
        return "SANDBOX_NETWORK=egress needs perl (Debian's perl-base) for its bridge; or set SANDBOX_NETWORK=off"
    try:
        result = subprocess.run([BWRAP, *base_arguments(own_network=True), "--", "cat", "/proc/self/status"],
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


def base_arguments(own_network: bool) -> list[str]:
    # A user namespace without capabilities: started by root, bubblewrap would otherwise leave the
    # program nearly all of root's (mount, umount of what hides the service's data, raw sockets).
    arguments = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                 "--unshare-user", "--cap-drop", "ALL",
                 "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent"]
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
async def sandboxed_run(argv: list[str], cwd: Path, env: dict[str, str],
                        writable_paths: Sequence[Path]) -> AsyncIterator[Prepared]:
    """`argv` wrapped in the sandbox (unchanged with SANDBOX=off); when the block ends, the
    worktree's own branch takes what the program committed on it, and the run's view goes."""
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
            entries = await egress_hosts.entries_of_run(sandbox.allowed, git.common if git else None)
            egress = await egress_proxy.open_egress(entries, scratch, str(cwd))
            argv, env = egress.wrap(argv), {**env, **egress.environment}
        yield Prepared([BWRAP, *arguments(sandbox, cwd.absolute(), writable, git, egress), "--", *argv],
                       _inside_environment(env), git, sandboxed=True)
    finally:
        if egress is not None:
            await egress.close()
        shutil.rmtree(scratch, ignore_errors=True)


def arguments(sandbox: Sandbox, worktree: Path, writable: list[Path], git: git_view.GitView | None,
              egress: egress_proxy.Egress | None = None) -> list[str]:
    """The mounts, outer folders first, so that a deeper one wins: a writable folder may hold a
    hidden one (which stays hidden), a hidden one may hold the worktree (which is seen)."""
    hidden = list(sandbox.hidden)  # the scratch needs nothing: it lies in /dev/shm (a new /dev inside) or the data dir
    if git is not None and git.common.name == ".git" and git.common.parent != worktree:
        hidden.append(git.common.parent)  # the main checkout: its files are no worktree of this run's
    mounts = [("--bind", path, path) for path in writable]
    mounts += [("--tmpfs", None, path) for path in hidden if path.is_dir()]
    mounts.append(("--bind", worktree, worktree))
    mounts += git.binds if git is not None else []
    if egress is not None:
        mounts.append(("--ro-bind", egress.folder, egress_proxy.INSIDE))
    arguments = base_arguments(own_network=sandbox.network != "open")
    for option, source, target in sorted(mounts, key=lambda mount: len(mount[2].parts)):
        arguments += [option, str(target)] if source is None else [option, str(source), str(target)]
    return [*arguments, "--chdir", str(worktree)]


def _inside_environment(env: dict[str, str]) -> dict[str, str]:
    inside = {**env, **SANDBOX_VARIABLES}
    if "TMPDIR" in inside:
        inside["TMPDIR"] = "/tmp"  # its own /tmp; the worker's TMPDIR may be hidden
    return inside
