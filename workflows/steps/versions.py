"""Which version of the message path a run follows: runs started before a change replay the
activities they called (Temporal's `workflow.patched`); drop an old branch once no run of it is left."""

from __future__ import annotations

from temporalio import workflow

# V2: the create path's lookups are asked together, adoption can be local, the limit is counted.
CREATE_PATH_V2 = "lookups-together-adopt-locally-count"
# V3, which includes V2: worktrees are created, and a message's replies sent, as local activities.
LOCAL_STEPS = "create-and-reply-locally"


def uses_local_steps() -> bool:
    """Asked where a step first differs; the answer holds for the whole run (the SDK memoises it)."""
    return workflow.patched(LOCAL_STEPS)


def create_path_v2_or_later() -> bool:
    # A new run records the one V3 marker; a V2 run replays as V2.
    return uses_local_steps() or workflow.patched(CREATE_PATH_V2)
# Messages that are not commands are handed to the coding agent of their environment.
AGENT_RUNS = "agent-runs"


def hands_messages_to_agent() -> bool:
    return workflow.patched(AGENT_RUNS)
# A message for work whose worktree a close or the stale cleanup removed brings it back from its archive.
RETURNS_TO_ARCHIVES = "return-to-archives"


def returns_to_archives() -> bool:
    return workflow.patched(RETURNS_TO_ARCHIVES)
# `/clone <name>` chooses a registered codebase by its name (it used to answer with its usage).
CLONE_BY_NAME = "clone-by-name"


def clones_by_name() -> bool:
    return workflow.patched(CLONE_BY_NAME)
# A restore whose branch works in another worktree again brings the archived files in there.
RESTORE_INTO_ACTIVE = "restore-into-active-worktree"


def brings_archives_into_active_worktrees() -> bool:
    return workflow.patched(RESTORE_INTO_ACTIVE)
# `/status` counts a codebase's worktrees in one activity on its host (the listing stays out of the history).
COUNTS_ON_HOST = "status-counted-on-host"


def counts_on_host() -> bool:
    return workflow.patched(COUNTS_ON_HOST)
# The scheduled cleanup also removes hibernated environments gone stale.
STALE_HIBERNATED = "stale-hibernated"


def removes_stale_hibernated() -> bool:
    return workflow.patched(STALE_HIBERNATED)
# A reuse takes the worktree check that came with the conversation's record: one local activity fewer.
CHECK_WITH_RECORD = "worktree-checked-with-record"


def takes_check_from_record() -> bool:
    return workflow.patched(CHECK_WITH_RECORD)
# With no agent, the conversation is told so on its first message, beside the worktree's line (it used
# to come on the second, the first message's replies already being said).
NO_AGENT_TOLD_FIRST = "no-agent-told-on-first-message"


def tells_no_agent_first() -> bool:
    return workflow.patched(NO_AGENT_TOLD_FIRST)
# A message that finds the worktree it recorded itself, in an attempt whose answer was lost (its workflow
# task timed out on a busy machine), finishes its own step again: "created", not "attached" to another's.
FINISHES_OWN_RECORD = "finishes-its-own-record"


def finishes_own_record() -> bool:
    return workflow.patched(FINISHES_OWN_RECORD)
# A command on the worktree (`/status`, `/fix-ci`, `/update-branch`) in a conversation that has none yet
# looks it up as a message does, creating nothing (a PR's first comment finds its issue's worktree).
COMMANDS_FIND_WORKTREES = "commands-find-worktrees"


def commands_find_worktrees() -> bool:
    return workflow.patched(COMMANDS_FIND_WORKTREES)
# A message for a codebase on another host asks that host first: a silent one is said within seconds, and the
# message waits for it durably (workflows/host_wait.py) instead of hanging on the host's queue.
WAITS_FOR_HOST = "waits-for-host"


def waits_for_host() -> bool:
    return workflow.patched(WAITS_FOR_HOST)
# The scheduled cleanup sweeps each host's codebases in a workflow of their own, all hosts at once
# (workflows/cleanup_hosts.py): a host that is down delays only its own codebases.
SWEEPS_HOSTS_APART = "cleanup-per-host"


def sweeps_hosts_apart() -> bool:
    return workflow.patched(SWEEPS_HOSTS_APART)
