"""Error types: the `type` of the ApplicationErrors that activities raise on purpose."""

from __future__ import annotations

# Raised as non-retryable: the input is wrong, retrying cannot help, and the user is told why.
INVALID_REPOSITORY = "InvalidRepository"
NAME_TAKEN = "NameTaken"
WORKTREE_CONFLICT = "WorktreeConflict"
UNSAFE_PATH = "UnsafePath"
INVALID_BRANCH = "InvalidBranch"
NO_WORKER = "NoWorkerForHost"
# The disk that holds the worktrees is full: nothing was left half-made, and freeing space fixes it.
DISK_FULL = "DiskFull"
# A hibernated worktree could not come back (its branch moved, its path is taken): the reason is said.
RESTORE_REFUSED = "RestoreRefused"
# A codebase's checkout is gone from its host and cannot be cloned again (no URL, or the clone failed).
CHECKOUT_LOST = "CheckoutLost"
USER_ERRORS = [INVALID_REPOSITORY, NAME_TAKEN, WORKTREE_CONFLICT, UNSAFE_PATH, INVALID_BRANCH, NO_WORKER, DISK_FULL,
               RESTORE_REFUSED, CHECKOUT_LOST]

# The codebase already has MAX_WORKTREES_PER_CODEBASE active environments: answered with the
# limit's breakdown, not as a user error.
LIMIT_REACHED = "LimitReached"
