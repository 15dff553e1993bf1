"""Answers in pieces: two short lines 1.3 s apart (so the answer is seen growing), then a block of
the number of characters given as its argument (past a platform's length limit), then `the end`."""

import sys
import time

sys.stdin.read()
print("first line", flush=True)
time.sleep(1.3)
print("second line", flush=True)
time.sleep(1.3)
length = int(sys.argv[1])
print("\n".join("y" * 99 for _ in range(length // 100)), flush=True)
print("the end", flush=True)
