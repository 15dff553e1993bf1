"""Writes what it was given (working directory, input, environment) to `agent-report.json` in the
worktree, answers in three lines half a second apart, writes a file and commits it."""

import json
import os
import subprocess
import sys
import time

message = sys.stdin.read()
report = {"cwd": os.getcwd(), "stdin": message, "env": dict(os.environ), "stdin_closed": sys.stdin.read() == ""}
with open("agent-report.json", "w") as file:
    json.dump(report, file)
for line in ("Reading the code…", f"You said: {message}", "Done thinking."):
    print(line, flush=True)
    time.sleep(0.5)
with open("answer.txt", "w") as file:
    file.write(message)
subprocess.run(["git", "add", "answer.txt"], check=True)
subprocess.run(["git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "answer"],
               check=True)
print("warning: nothing serious", file=sys.stderr, flush=True)
