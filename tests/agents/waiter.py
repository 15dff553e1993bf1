"""Works until the file named by its argument exists, then answers and ends with exit code 0: a test
decides the moment the run ends by itself."""

import sys
import time
from pathlib import Path

release = Path(sys.argv[1])
message = sys.stdin.read().strip()
print(f"working on {message}", flush=True)
while not release.exists():
    time.sleep(0.02)
print(f"finished {message}", flush=True)
