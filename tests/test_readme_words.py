"""The README's words agree with what `make test` does and with what the service leaves in a user's
checkout (issue 47, items 13 and 14): the number of test processes is the Makefile's, said once; what
`make test` adds on disk is said once, and `.tools` is not bigger than it says; the branches, worktree
entries and refs a checkout gains are named, with how isolator cleans them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_test_processes_are_the_makefile_s_said_once() -> None:
    workers = re.search(r"^TEST_WORKERS \?= (\d+)$", (ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    said = re.findall(r"(?:in|`?TEST_WORKERS`? \()\s*(\d+)\)? processes", README)
    assert said == [workers], said


def test_what_make_test_adds_on_disk_is_said_once_and_tools_is_no_bigger() -> None:
    sizes = re.findall(r"`make test` adds about ([\d.]+) GB", README)
    assert len(sizes) == 1 and len(re.findall(r"\d GB more", README)) == 0, sizes
    tools = re.search(r"in `\.tools/` \(([\d.]+) GB\)", README)
    assert tools is not None
    if (ROOT / ".tools").is_dir():  # `make test` made it: measured as the README says
        counted = subprocess.run(["du", "-s", "--block-size=1", "-D", str(ROOT / ".tools")], capture_output=True,
                                 text=True, check=True)
        measured = int(counted.stdout.split()[0]) / 2**30
        assert measured <= float(tools.group(1)) * 1.15, f".tools takes {measured:.2f} GiB"


def test_it_says_what_a_checkout_gains_and_how_isolator_cleans_it() -> None:
    assert "your checkout is untouched" not in README
    gains = README[README.index("Your\ncheckout's files are untouched"):README.index("**5. Go on.**")]
    for named in ("`thread-…`", "`task-…`", "`git worktree list`", "`.warm/`", "`refs/isolator/kept/*`",
                  "`ARCHIVE_RETENTION_DAYS`", "cleans them"):
        assert named in gains, named
