"""Starts a child that would run for an hour, appends both process ids to the file named by its
argument, says so, and then waits for ever: only a stop ends it. Asked something `quick`, it
answers at once instead. In the sandbox those ids are its own namespace's: the child carries the
file's name in its command line, so that the test finds both on the host (tests/agent_runs.spawned)."""

import os
import subprocess
import sys
import time

if "quick" in sys.stdin.read():
    print("quick answer", flush=True)
    sys.exit(0)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", sys.argv[1]])
with open(sys.argv[1], "a") as file:
    file.write(f"{os.getpid()} {child.pid}\n")
print("working on it", flush=True)
print(f"started child {child.pid}", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
