"""Changes the worktree as the message asks, as a coding agent would, and notes what it saw.

`leave`: writes `notes.txt` and leaves it uncommitted; `nothing`: changes nothing; anything else:
writes `work-N.txt` and commits it. `push`: then tries `git push origin HEAD` itself (with no
credentials of its own, this must fail). It always writes `build.log`, which the repository's `.gitignore`
ignores. With an argument, appends its environment and the push's outcome to that file (JSON lines).
"""

import json
import os
import subprocess
import sys

message = sys.stdin.read().strip()
words = message.split()
note: dict = {"message": message, "env": dict(os.environ)}
with open("build.log", "w") as file:
    file.write("ignored\n")
if "leave" in words:
    with open("notes.txt", "a") as file:
        file.write(f"{message}\n")
elif "nothing" not in words:
    number = len([name for name in os.listdir(".") if name.startswith("work-")]) + 1
    with open(f"work-{number}.txt", "w") as file:
        file.write(f"{message}\n")
    subprocess.run(["git", "add", f"work-{number}.txt"], check=True)
    subprocess.run(["git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false",
                    "commit", "-q", "-m", f"work {number}"], check=True)
if "push" in words:
    pushed = subprocess.run(["git", "push", "origin", "HEAD"], capture_output=True, text=True,
                            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    note["push"] = {"code": pushed.returncode, "stderr": pushed.stderr}
if len(sys.argv) > 1:
    with open(sys.argv[1], "a") as file:
        file.write(json.dumps(note) + "\n")
print(f"Done: {message}", flush=True)
