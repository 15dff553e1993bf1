"""A hostile agent: it tries to reach what the sandbox must keep from it, records what happened to
each attempt in `hostile-report.json` in its worktree, then does an honest agent's work (edits,
commits on its own branch, runs the project's tests) and leaves a process running in the background,
out of its process group. Asked to `hang`, it then waits for ever: only a stop ends it.

Arguments: another worktree's file, the service's data folder, the worker's process id, a file
outside its worktree to write, the name of another conversation's branch, a marker for its
background process (so the test can look for it on the host)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

other_file, data_dir, worker_pid, outside_file, other_branch, marker = sys.argv[1:7]
message = sys.stdin.read()
report: dict[str, str] = {}


def attempt(name: str, action) -> None:
    try:
        result = action()
        report[name] = f"succeeded: {result!r}"[:300]
    except Exception as error:  # noqa: BLE001 - what failed is what it records
        report[name] = f"failed: {type(error).__name__}: {error}"[:300]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def read_data_folder() -> str:
    found = [str(path) for path in Path(data_dir).rglob("*") if path.is_file()]
    if not found:
        raise FileNotFoundError(f"{data_dir} shows no file")
    return Path(found[0]).read_text(errors="replace")


def delete_archives() -> str:
    common = Path(git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    names = git("for-each-ref", "--format=%(refname)", "refs/isolator/").split()
    for name in names:
        git("update-ref", "-d", name)
    loose = [path for path in (common / "refs" / "isolator").rglob("*") if path.is_file()]
    for path in loose:
        path.unlink()
    packed = common / "packed-refs"
    packed.write_text("".join(line for line in packed.read_text().splitlines(True) if "refs/isolator/" not in line))
    if not names and not loose:
        raise LookupError("no refs/isolator/* to be seen")
    return f"deleted {names} {loose}"


def rewrite_other_branch() -> str:
    git("update-ref", f"refs/heads/{other_branch}", "HEAD")
    return git("rev-parse", other_branch).strip()


attempt("read another worktree's file", lambda: Path(other_file).read_text())
attempt("read the service's data folder", read_data_folder)
attempt("read the worker's environment", lambda: Path(f"/proc/{worker_pid}/environ").read_bytes())
attempt("signal the worker", lambda: os.kill(int(worker_pid), signal.SIGCONT))
attempt("write outside the worktree", lambda: Path(outside_file).write_text("escaped\n"))
attempt("delete refs/isolator/*", delete_archives)
attempt("rewrite another conversation's branch", rewrite_other_branch)

# An honest agent's work: edit, commit on its own branch, run the project's tests.
with open("hostile.txt", "a") as edited:
    edited.write("edited in the sandbox\n")
git("add", "hostile.txt")
git("-c", "user.name=Agent", "-c", "user.email=agent@example.invalid", "commit", "-q", "-m", "hostile agent's commit")
tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_project.py"],
                       capture_output=True, text=True)
report["run the project's tests"] = f"exit {tests.returncode}: {tests.stdout.strip().splitlines()[-1:]}"
report["sandboxed"] = os.environ.get("IS_SANDBOX", "")
Path("hostile-report.json").write_text(json.dumps(report, indent=1))

# Left behind: a process in a session of its own, out of reach of a process-group kill.
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", marker], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("done the rounds", flush=True)
if "hang" in message:
    while True:
        time.sleep(1)
