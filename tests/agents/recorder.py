"""Appends `start <message> <time>` and `end <message> <time>` to the file named by its argument,
sleeping in between (seconds: the second argument), so that a test can see whether runs overlapped."""

import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
message = sys.stdin.read().strip()
with open(path, "a") as file:
    file.write(f"start {message} {time.time()}\n")
time.sleep(seconds)
with open(path, "a") as file:
    file.write(f"end {message} {time.time()}\n")
print(f"finished {message}", flush=True)
