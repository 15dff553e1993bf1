"""Tries to read what lies outside its worktree on the host, and writes what it managed into
`snoop-report.json`: the plan (argv[1], JSON) names the files to read, the PostgreSQL sockets to log
in to (as whoever it runs as: peer authentication), and the commands to run."""

import json
import os
import socket
import struct
import subprocess
import sys

plan = json.loads(sys.argv[1])
report: dict[str, str] = {}


def attempt(name: str, action) -> None:
    try:
        report[name] = f"succeeded: {action()!r}"
    except Exception as error:  # noqa: BLE001 - every way it fails is a wall that held
        report[name] = f"failed: {type(error).__name__}: {error}"


def read(path: str) -> str:
    with open(path, errors="replace") as file:
        return file.read(200)


def log_in(socket_path: str, user: str) -> str:
    """A PostgreSQL start-up message; the server's first answer says whether it let us in."""
    body = b"".join(part.encode() + b"\0" for part in ("user", user, "database", "postgres")) + b"\0"
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(10)
        connection.connect(socket_path)
        connection.sendall(struct.pack("!ii", len(body) + 8, 196608) + body)
        kind, _length = struct.unpack("!ci", connection.recv(5))
        code = struct.unpack("!i", connection.recv(4))[0] if kind == b"R" else None
        if kind == b"R" and code == 0:
            return "logged in"
        raise PermissionError(f"the server answered {kind!r} {code}")


def run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if done.returncode:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[:200]}")
    return done.stdout[:200]


for path in plan.get("read", []):
    attempt(f"read {path}", lambda path=path: read(path))
for path in plan.get("list", []):
    attempt(f"list {path}", lambda path=path: sorted(os.listdir(path)))
for path, user in plan.get("log_in", []):
    attempt(f"log in at {path}", lambda path=path, user=user: log_in(path, user))
for argv in plan.get("run", []):
    attempt(f"run {' '.join(argv)}", lambda argv=argv: run(argv))
attempt("read its own worktree", lambda: sorted(os.listdir("."))[:3])
attempt("run the system's programs", lambda: run(["sh", "-c", "echo ok"]))
attempt("write its HOME", lambda: open(os.path.join(os.environ["HOME"], "note"), "w").write("mine"))
for path in plan.get("see", []):  # listed last: its HOME holds its note by then
    attempt(f"list {path}", lambda path=path: sorted(os.listdir(path)))

with open("snoop-report.json", "w") as file:
    json.dump(report, file, indent=1)
print("looked around")
