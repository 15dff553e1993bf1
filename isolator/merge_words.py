"""Whether a branch is merged, in the same words wherever it is said: chat's `/worktree why`, and the
dashboard's Merged column, cleanup verdict and environment page. A branch still at the commit it started
from has no work of its own: it is neither merged nor unmerged, though git calls its tip merged."""

from __future__ import annotations

NO_WORK_YET = "not yet a question: the branch has no commits of its own since it started"


def merged_words(proof: str | None, fresh: bool) -> str:
    """What follows "Merged: ". `proof` says which check found all of its work in the default branch
    (None: none did); `fresh`: the branch is still at its start commit."""
    if fresh:
        return NO_WORK_YET
    return f"yes, {proof}" if proof else "no, it has work of its own"


def merged_cell(proof: str | None, fresh: bool) -> str:
    """The same fact, short, for a table's cell."""
    if fresh:
        return "no work of its own yet"
    return "yes" if proof else "no"
