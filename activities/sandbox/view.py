"""What a sandboxed run sees of the host: an allow-list, never the host with holes.

A run's root is an empty tmpfs of bubblewrap's. Into it go, read-only, the system's programs and
libraries (`/usr`, `/bin`, `/lib*`, `/sbin`) and `/etc` without its secret files (those no other user
may read: `shadow`, `ssl/private`, ...); the folders of the worker's PATH outside the system, with
their toolchains; the folders its own program needs, worked out from the
executable (a Python venv and the Python it was made from, a `node_modules` tree, the interpreter a
script names); and the operator's SANDBOX_READABLE_PATHS. Its worktree, its git view, its own `/tmp`
and HOME, and the folders its caller names are added by bubblewrap.py. Nothing else is there: no other
home, no `/run`, `/var` or `/srv`, no other codebase, no socket of the host.

Whatever a readable or writable folder holds of the service's own (its data, the worktrees, the clones,
the database's socket folder) is hidden again behind an empty folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Where a local PostgreSQL listens by default, whatever DATABASE_URL says.
DATABASE_SOCKET_FOLDERS = (Path("/run/postgresql"), Path("/var/run/postgresql"))
SHEBANG_LIMIT = 256


@dataclass(frozen=True)
class Mount:
    option: str  # a bubblewrap option: --ro-bind, --bind, --tmpfs, --symlink
    target: Path
    source: str | None = None  # what is bound, or a symlink's text
    size: int | None = None  # bytes, for a tmpfs

    def arguments(self) -> list[str]:
        size = ["--size", str(self.size)] if self.size is not None else []
        return [*size, self.option, *([self.source] if self.source is not None else []), str(self.target)]


def system_mounts(root: Path = Path("/")) -> list[Mount]:
    """The system's programs and libraries, read-only (a merged-/usr link stays a link), `/etc`
    with each secret file behind an empty one."""
    mounts = []
    for name in SYSTEM_FOLDERS:
        path = root / name.lstrip("/")
        if path.is_symlink():
            mounts.append(Mount("--symlink", Path(name), os.readlink(path)))
        elif path.is_dir():
            mounts.append(Mount("--ro-bind", Path(name), str(path)))
    for secret in etc_secrets(root / "etc"):
        inside = Path("/") / secret.relative_to(root)
        mounts.append(Mount("--tmpfs", inside) if secret.is_dir() else Mount("--ro-bind", inside, "/dev/null"))
    return mounts


def etc_secrets(etc: Path) -> list[Path]:
    """What in `/etc` another user may not read (a folder such a file is in is not walked): what its
    owner keeps to itself, a root-run worker's sandbox does not read either."""
    secrets = []
    for folder, folders, files in os.walk(etc):
        for name in [*folders, *files]:
            path = Path(folder) / name
            try:
                status = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(status.st_mode) or status.st_mode & stat.S_IROTH:
                continue
            if stat.S_ISREG(status.st_mode) and status.st_size == 0:
                continue  # an empty file (a lock) holds nothing, and each mount over one costs the run's start
            if stat.S_ISDIR(status.st_mode) or stat.S_ISREG(status.st_mode):
                secrets.append(path)
        folders[:] = [name for name in folders if Path(folder, name) not in secrets]
    return secrets


def program_folders(argv: Sequence[str], env: Mapping[str, str]) -> list[Path]:
    """What the program `argv` names needs to run, beyond the system: its executable (where a link
    leads, too), the venv or `node_modules` tree it lies in, the Python a venv was made from, and the
    same again for the interpreter its first line names (`#!/usr/bin/env node`). The operator's
    AGENT_COMMAND may also name the script an interpreter runs: its first argument that is no option,
    when that is an absolute path of a file (never a later one: those are the program's data)."""
    found: list[Path] = []
    seen: set[str] = set()

    def add(program: str) -> None:
        path = _which(program, env)
        if path is None or str(path) in seen:
            return
        seen.add(str(path))
        real = path.resolve()
        for place in dict.fromkeys([path, real]):
            if _outside_system(place):
                found.extend([place, *_tree_of(place)])
        interpreter = _interpreter(real)
        if interpreter:
            add(interpreter)

    add(argv[0])
    script = next((argument for argument in argv[1:] if not argument.startswith("-")), "")
    if script.startswith("/") and Path(script).is_file():
        add(script)
    return list(dict.fromkeys(found))


@functools.cache
def path_folders(path: str) -> tuple[Path, ...]:
    """The folders of a PATH outside the system, and the toolchain each belongs to (a pyenv's or
    nvm's root, a prefix, a venv, rustup's toolchains): a set-up's `python3`, `node` or `cargo` is the
    one the worker has.
    Never a home or the root itself, nor a relative folder."""
    found: list[Path] = []
    for entry in path.split(os.pathsep):
        folder = Path(entry)
        if not folder.is_absolute() or folder in (Path("/"), Path.home()) or not folder.is_dir():
            continue
        if _outside_system(folder.resolve()):
            found += [folder, *_tree_of(folder / "program")]
            if (folder / "rustup").exists():  # rustup's proxies (cargo, rustc) run its toolchains
                found.append(Path(os.environ.get("RUSTUP_HOME") or Path.home() / ".rustup"))
    return tuple(dict.fromkeys(place for place in found if place not in (Path("/"), Path.home())))


def _which(program: str, env: Mapping[str, str]) -> Path | None:
    if "/" in program:
        return Path(program).absolute() if Path(program).is_file() else None
    found = shutil.which(program, mode=os.F_OK, path=env.get("PATH", os.defpath))
    return Path(found).absolute() if found else None


def _outside_system(path: Path) -> bool:
    return not any(path == Path(folder) or Path(folder) in path.parents for folder in SYSTEM_FOLDERS)


def _tree_of(program: Path) -> list[Path]:
    """The venv (and the Python it was made from), the outermost `node_modules`, the prefix
    (`<prefix>/bin/<program>` beside `<prefix>/lib`), or the version manager (pyenv, rbenv, nodenv,
    asdf: `<root>/shims/<program>`) a program lies in."""
    trees: list[Path] = []
    prefix = program.parent.parent
    if program.parent.name == "shims" and prefix not in (Path("/"), Path.home()):
        trees.append(prefix)
    if program.parent.name == "bin" and (prefix / "lib").is_dir() and prefix not in (Path("/"), Path.home()):
        trees.append(prefix)
    for folder in program.parents:
        config = folder / "pyvenv.cfg"
        if config.is_file():
            trees.append(folder)
            home = _venv_home(config)
            if home is not None and _outside_system(home):
                trees.append(home.parent if home.name == "bin" and home.parent != Path.home() else home)
            break
    modules = [folder for folder in program.parents if folder.name == "node_modules"]
    if modules:
        trees.append(modules[-1])
    return trees


def _venv_home(config: Path) -> Path | None:
    for line in config.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return Path(value.strip()).resolve()
    return None


def _interpreter(program: Path) -> str | None:
    """The program a script's `#!` line runs (`env`'s argument when that is `env`)."""
    try:
        with program.open("rb") as file:
            first = file.read(SHEBANG_LIMIT).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        named = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        return named[0] if named else None
    return words[0]


def database_socket_folders(database_url: str | None, environ: Mapping[str, str]) -> list[Path]:
    """Every folder a PostgreSQL of the service's may listen in: the defaults, PGHOST, and the `host`
    of DATABASE_URL when it names a folder (`postgresql:///db?host=/var/run/postgresql`)."""
    folders = list(DATABASE_SOCKET_FOLDERS)
    hosts = [environ.get("PGHOST", "")]
    if database_url:
        split = urlsplit(database_url)
        hosts += parse_qs(split.query).get("host", [])
        hosts.append(unquote(split.netloc.rpartition("@")[2]))
    for host in hosts:
        folders += [Path(part) for part in host.split(",") if part.startswith("/")]
    return list(dict.fromkeys(folders))


def hidden_within(hidden: Iterable[Path], seen: Iterable[Path]) -> list[Path]:
    """The hidden folders that lie in a folder the run sees (the others are not there to hide)."""
    seen = list(seen)
    return [path for path in hidden
            if path.is_dir() and any(place == path or place in path.parents for place in seen)]
