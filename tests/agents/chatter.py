"""Prints as many lines as its argument says, as fast as it can (an agent that talks a lot), then one
last line: `said <n> lines`."""

import sys

lines = int(sys.argv[1])
sys.stdin.read()
out = sys.stdout
for number in range(lines):
    out.write(f"line {number}: {'all work and no play ' * 4}\n")
out.write(f"said {lines} lines\n")
out.flush()
