"""Starts a child that would run for an hour, writes both process ids to the file named by its
argument, says so, and then waits for ever: only a stop ends it."""

import os
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
with open(sys.argv[1], "w") as file:
    file.write(f"{os.getpid()} {child.pid}\n")
print("working on it", flush=True)
while True:
    time.sleep(1)
