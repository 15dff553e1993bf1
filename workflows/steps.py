"""Typed calls of the activities, with their options.

PostgreSQL calls run as local activities on the workflow's worker. Work on the disk (is the
worktree there, is there one to adopt, create it) runs locally too when the codebase is on this
worker's host, and goes to the task queue of the codebase's host, `{queue}@{host}`, only when it is
elsewhere. A message's replies are local activities as well; the environment workflow's are not.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as StepTimeout

from activities.contracts import (
    USER_ERRORS,
    Adoptable,
    AdoptionSearch,
    AdoptQuery,
    CloseInput,
    CompleteHintsInput,
    IsolationHints,
    Attached,
    AttachInput,
    Codebase,
    Conversation,
    ConversationInput,
    Environment,
    EnvironmentCheck,
    EnvironmentCheckInput,
    IdentityQuery,
    LinkCodebaseInput,
    RecordedEnvironment,
    RecordEnvironmentInput,
    RegisteredCodebase,
    ReplyInput,
    RepositoryInfo,
    RepositorySource,
    RetireInput,
    Retired,
    WorktreeCreation,
    WorktreeReady,
    WorktreeRequest,
)
from activities.lifecycle_contracts import EnvironmentCount, EnvironmentsOfCodebase

RETRY_POLICY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    maximum_interval=timedelta(seconds=10),
    non_retryable_error_types=USER_ERRORS,
)
# Workers heartbeat every activity while it runs (workers/interceptors.py): a dead worker's
# activity is retried elsewhere after this, whatever its start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
# Registration names a host; when no worker of that host takes the git work, the user hears so.
HOST_PICKUP_TIMEOUT = timedelta(seconds=30)
# Local activities retry through a database restart, within a bound.
LOCAL_OPTIONS = dict(
    start_to_close_timeout=timedelta(seconds=10),
    schedule_to_close_timeout=timedelta(minutes=10),
    retry_policy=RETRY_POLICY,
)


# Runs started before these versions replay the activities they called (Temporal's `workflow.patched`);
# drop the old branches once none is left.
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


def host_queue(host: str) -> str:
    return f"{workflow.info().task_queue}@{host}"


async def record_conversation(request: ConversationInput) -> Conversation:
    return await workflow.execute_local_activity("record_conversation", request, result_type=Conversation, **LOCAL_OPTIONS)


async def validate_environment(environment: Environment, host: str) -> EnvironmentCheck:
    """Is the environment's worktree still on disk? A stat on its host: local when that is this host."""
    check = EnvironmentCheckInput(working_path=environment.working_path, host=host)
    result = await workflow.execute_local_activity(
        "validate_environment", check, result_type=EnvironmentCheck, **LOCAL_OPTIONS
    )
    if result.status != "elsewhere":
        return result
    return await workflow.execute_activity(
        "validate_environment", check, result_type=EnvironmentCheck, task_queue=host_queue(host),
        start_to_close_timeout=timedelta(seconds=30), retry_policy=RETRY_POLICY,
    )


async def retire_environment(request: RetireInput) -> Retired:
    return await workflow.execute_local_activity("retire_environment", request, result_type=Retired, **LOCAL_OPTIONS)


async def find_environment_by_identity(query: IdentityQuery) -> Environment | None:
    return await workflow.execute_local_activity(
        "find_environment_by_identity", query, result_type=Environment | None, **LOCAL_OPTIONS
    )


async def attach_conversation(request: AttachInput) -> Attached:
    return await workflow.execute_local_activity("attach_conversation", request, result_type=Attached, **LOCAL_OPTIONS)


async def create_worktree(request: WorktreeRequest, locally: bool) -> WorktreeReady:
    """`locally`: first try as a local activity, which works when the codebase is on this host."""
    if locally:
        # git can take minutes on a large checkout: the SDK keeps the workflow task alive meanwhile
        creation = await workflow.execute_local_activity(
            "create_worktree_here", request, result_type=WorktreeCreation,
            start_to_close_timeout=timedelta(minutes=10), retry_policy=RETRY_POLICY,
        )
        if creation.worktree is not None:
            return creation.worktree
    return await workflow.execute_activity(
        "create_worktree", request, result_type=WorktreeReady, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def record_environment(request: RecordEnvironmentInput) -> RecordedEnvironment:
    return await workflow.execute_local_activity(
        "record_environment", request, result_type=RecordedEnvironment, **LOCAL_OPTIONS
    )


async def send_reply(reply: ReplyInput, locally: bool = False) -> None:
    """Deliver a reply once. One the platform refused for good, or that stayed undeliverable for hours,
    is logged, never raised: the work it reports on is done, and an environment workflow must outlive
    a locked issue or a bot removed from a chat.

    `locally`: as a local activity, which saves the message a workflow task; the SDK waits out long
    retry intervals with timers."""
    # Platforms can be down for a while; keep trying with backoff, deliver once.
    options = dict(start_to_close_timeout=timedelta(seconds=30), schedule_to_close_timeout=timedelta(hours=6),
                   retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(minutes=2)))
    try:
        if locally:
            await workflow.execute_local_activity("send_reply", reply, **options)
        else:
            await workflow.execute_activity("send_reply", reply, heartbeat_timeout=HEARTBEAT_TIMEOUT, **options)
    except (ActivityError, ApplicationError, StepTimeout) as error:  # a local activity's error arrives unwrapped
        cause = error.cause if isinstance(error, ActivityError) else error
        workflow.logger.warning("reply %s not delivered: %s", reply.idempotency_key, cause)


async def find_codebase(source: RepositorySource) -> Codebase | None:
    return await workflow.execute_local_activity("find_codebase", source, result_type=Codebase | None, **LOCAL_OPTIONS)


async def inspect_repository(source: RepositorySource) -> RepositoryInfo:
    return await workflow.execute_activity(
        "inspect_repository", source, result_type=RepositoryInfo, task_queue=host_queue(source.host),
        start_to_close_timeout=timedelta(minutes=1), schedule_to_start_timeout=HOST_PICKUP_TIMEOUT,
        retry_policy=RETRY_POLICY,
    )


async def clone_repository(source: RepositorySource) -> RepositoryInfo:
    return await workflow.execute_activity(
        "clone_repository", source, result_type=RepositoryInfo, task_queue=host_queue(source.host),
        start_to_close_timeout=timedelta(hours=2), heartbeat_timeout=timedelta(seconds=30),
        schedule_to_start_timeout=HOST_PICKUP_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def record_codebase(info: RepositoryInfo) -> RegisteredCodebase:
    return await workflow.execute_local_activity("record_codebase", info, result_type=RegisteredCodebase, **LOCAL_OPTIONS)


async def link_conversation_codebase(link: LinkCodebaseInput) -> None:
    await workflow.execute_local_activity("link_conversation_codebase", link, **LOCAL_OPTIONS)


async def close_conversation(request: CloseInput) -> str | None:
    """Returns the closed conversation's environment id, if it has one."""
    return await workflow.execute_local_activity(
        "close_conversation", request, result_type=str | None, **LOCAL_OPTIONS
    )


async def complete_hints(request: CompleteHintsInput) -> IsolationHints:
    """Ask the platform's API what the webhook did not carry; platform outages are waited out."""
    return await workflow.execute_activity(
        "complete_hints", request, result_type=IsolationHints, start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(minutes=30), retry_policy=RETRY_POLICY,
    )


async def find_adoptable_worktree(query: AdoptQuery) -> Adoptable | None:
    """Worktrees are listed on the codebase's host: a local activity when that is this worker's host,
    which saves the round trip through the server."""
    host_options = dict(task_queue=host_queue(query.codebase.host), start_to_close_timeout=timedelta(minutes=1),
                        retry_policy=RETRY_POLICY)
    if not create_path_v2_or_later():
        return await workflow.execute_activity(
            "find_adoptable_worktree", query, result_type=Adoptable | None, **host_options
        )
    # It waits for a creation under way on the same path, which can take longer than a database call.
    search = await workflow.execute_local_activity(
        "find_adoptable_worktree", query, result_type=AdoptionSearch,
        **{**LOCAL_OPTIONS, "start_to_close_timeout": timedelta(minutes=1)},
    )
    if search.outcome == "elsewhere":
        search = await workflow.execute_activity(
            "find_adoptable_worktree", query, result_type=AdoptionSearch, **host_options
        )
    return search.adoptable


async def count_environments(codebase_id: str) -> EnvironmentCount:
    return await workflow.execute_local_activity(
        "count_environments", EnvironmentsOfCodebase(codebase_id), result_type=EnvironmentCount, **LOCAL_OPTIONS
    )
