"""What a run sees, as pure functions of the host's layout (activities/sandbox/view.py): /etc without
what its owner keeps to itself, the folders a program needs worked out from its executable, the
database's socket folders from DATABASE_URL, and those hidden even inside a folder listed readable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.sandbox import bubblewrap, view


def test_etc_keeps_what_anyone_may_read_and_hides_the_rest(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    (etc / "ssl" / "private").mkdir(parents=True)
    (etc / "ssl" / "private" / "key.pem").write_text("key")
    (etc / "ssl" / "private").chmod(0o700)
    (etc / "shadow").write_text("root:$6$...")
    (etc / "shadow").chmod(0o640)
    (etc / "hosts").write_text("127.0.0.1 localhost")

    assert sorted(view.etc_secrets(etc)) == [etc / "shadow", etc / "ssl" / "private"]
    mounts = {mount.target: mount for mount in view.system_mounts(tmp_path)}
    assert mounts[Path("/etc/shadow")].source == "/dev/null"
    assert mounts[Path("/etc/ssl/private")].option == "--tmpfs"


def test_a_programs_folders_follow_its_venv_its_node_modules_and_its_interpreter(tmp_path: Path) -> None:
    python_home = tmp_path / "pythons" / "3.11"
    (python_home / "bin").mkdir(parents=True)
    (python_home / "lib").mkdir()
    (python_home / "bin" / "python3").write_text("")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {python_home / 'bin'}\n")
    (venv / "bin" / "python").symlink_to(python_home / "bin" / "python3")
    (venv / "bin" / "tool").write_text(f"#!{venv / 'bin' / 'python'}\n")
    modules = tmp_path / "tools" / "node_modules"
    (modules / "@x" / "cli" / "bin").mkdir(parents=True)
    (modules / ".bin").mkdir()
    (modules / "@x" / "cli" / "bin" / "cli.js").write_text("#!/usr/bin/env node\n")
    (modules / ".bin" / "cli").symlink_to(modules / "@x" / "cli" / "bin" / "cli.js")
    script = tmp_path / "agent.py"
    script.write_text("print()")
    secret = tmp_path / "secret.txt"
    secret.write_text("not the program's")

    venv_folders = view.program_folders([str(venv / "bin" / "tool")], os.environ)
    node_folders = view.program_folders([str(modules / ".bin" / "cli")], os.environ)
    script_folders = view.program_folders([str(venv / "bin" / "python"), "-u", str(script), str(secret)], os.environ)

    assert {venv, python_home} <= set(venv_folders)
    assert modules in node_folders and all(str(path).startswith(str(modules)) for path in node_folders)
    assert script in script_folders and secret not in script_folders, "only the script an interpreter runs"


def test_the_database_socket_folders_are_hidden_even_where_the_operator_lists_their_parent(tmp_path: Path) -> None:
    sockets = tmp_path / "run" / "postgresql"
    sockets.mkdir(parents=True)
    hidden = view.database_socket_folders(f"postgresql:///isolator?host={sockets}", {"PGHOST": "/pg/else"})
    assert {sockets, Path("/pg/else"), Path("/run/postgresql"), Path("/var/run/postgresql")} <= set(hidden)
    assert sockets in view.database_socket_folders(f"postgresql://me@{str(sockets).replace('/', '%2F')}/db", {})

    sandbox = bubblewrap.Sandbox(True, None, "off", tuple(hidden), (), tmp_path / "scratch",
                                 readable=(tmp_path / "run",), system=())
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    seen = bubblewrap.Seen(worktree, [], [tmp_path / "run"], {}, None)
    arguments = bubblewrap.arguments(sandbox, seen, None)

    listed, hid = arguments.index(str(tmp_path / "run")), arguments.index(str(sockets))
    assert arguments[listed - 1:listed + 2] == ["--ro-bind", str(tmp_path / "run"), str(tmp_path / "run")]
    assert arguments[hid - 1] == "--tmpfs" and hid > listed, "the socket folder is emptied over the listed one"


def test_the_workers_path_brings_its_toolchains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyenv, cargo, rustup = tmp_path / "pyenv", tmp_path / "cargo" / "bin", tmp_path / "rustup"
    (pyenv / "shims").mkdir(parents=True)
    cargo.mkdir(parents=True)
    (cargo / "rustup").write_text("")
    monkeypatch.setenv("RUSTUP_HOME", str(rustup))

    folders = view.path_folders(os.pathsep.join([str(pyenv / "shims"), str(cargo), "relative/bin", "/usr/bin", "/"]))

    assert folders == (pyenv / "shims", pyenv, cargo, rustup)
