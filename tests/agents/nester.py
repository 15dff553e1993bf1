"""Leaves a nested repository with no commit, as an agent trying things might: `nest <name>` runs
`git init -q <name>` in its worktree and writes a file into it; any other message writes `note-N.txt`."""

import os
import subprocess
import sys

words = sys.stdin.read().split()
if words[:1] == ["nest"]:
    subprocess.run(["git", "init", "-q", words[1]], check=True)
    with open(os.path.join(words[1], "draft.txt"), "w") as file:
        file.write("not committed anywhere yet\n")
else:
    number = len([name for name in os.listdir(".") if name.startswith("note-")]) + 1
    with open(f"note-{number}.txt", "w") as file:
        file.write(" ".join(words) + "\n")
print(f"Done: {' '.join(words)}", flush=True)
