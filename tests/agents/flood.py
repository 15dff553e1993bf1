"""Prints the number of mebibytes given as its argument without a single newline, and some standard
error; then exits with the code given as its second argument."""

import sys

mebibytes, code = int(sys.argv[1]), int(sys.argv[2])
block = "x" * (1 << 20)
for _ in range(mebibytes):
    sys.stdout.write(block)
sys.stdout.flush()
for number in range(30):
    print(f"error line {number}", file=sys.stderr)
sys.exit(code)
