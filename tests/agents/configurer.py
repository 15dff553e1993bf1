"""Rewrites the repository's own configuration on its branch, as an attacker would: commits the message,
as it is, as `.isolator.toml` (issue 46: nothing of the agent's branch may decide what the service does
outside the sandbox)."""

import subprocess
import sys

with open(".isolator.toml", "w") as file:
    file.write(sys.stdin.read())
subprocess.run(["git", "add", ".isolator.toml"], check=True)
subprocess.run(["git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false",
                "commit", "-q", "-m", "my own configuration"], check=True)
print("Committed my own .isolator.toml", flush=True)
