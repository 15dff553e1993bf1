"""A greedy agent: asked to `fork N`, it starts N processes that sleep (a fork bomb, bounded so that
a host without limits survives it); asked to `allocate N`, it takes N MiB of memory, touched, 64 MiB
at a time. It appends what it has so far to the file named by its argument after each step ("started
12", "allocated 640"), and once it has all it asked for, says so and ends. Anything else it answers
at once: another conversation's quick question."""

import subprocess
import sys
import time

message = sys.stdin.read().split()
progress = sys.argv[1]
STEP = 64


def record(line: str) -> None:
    with open(progress, "a") as file:
        file.write(line + "\n")


if message[:1] == ["fork"]:
    wanted, children = int(message[1]), []
    give_up = time.monotonic() + 20
    while len(children) < wanted and time.monotonic() < give_up:
        try:
            children.append(subprocess.Popen(["sleep", "30"]))
            record(f"started {len(children)}")
        except OSError as error:  # refused (EAGAIN at the limit): a bomb tries again
            record(f"refused {error.errno}")
            time.sleep(0.01)
    print(f"started {len(children)} processes", flush=True)
elif message[:1] == ["allocate"]:
    held = []
    while len(held) * STEP < int(message[1]):
        held.append(b"\x01" * (STEP << 20))
        record(f"allocated {len(held) * STEP}")
    print(f"allocated {len(held) * STEP} MiB", flush=True)
else:
    print("quick answer", flush=True)
