"""The worker: one process per host, listening on the shared queue and on its host's queue."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, AsyncIterator, Callable, Sequence

import asyncpg
from temporalio.client import Client
from temporalio.worker import Interceptor, UnsandboxedWorkflowRunner, Worker

from activities.automations.commands import AutomationCommandActivities
from activities.automations.firings import AutomationActivities
from activities.automations.repository import RepositoryAutomationActivities
from activities.chat.conversations import ConversationActivities
from activities.chat.platforms import PlatformActivities, deliverers
from activities.chat.refusals import RefusalActivities
from activities.chat.replies import ReplyActivities
from activities.codebases.host_workers import HostWorkerActivities
from activities.codebases.host_waits import HostAnswerActivities, HostSeenActivities
from activities.codebases.registration import CodebaseActivities
from activities.codebases.views import CodebaseViewActivities
from activities.codebases import moving, rebuild
from activities.environments.archives import ArchiveActivities
from activities.environments.isolation import IsolationActivities
from activities.environments.ports import PortActivities
from activities.environments.records import EnvironmentActivities
from activities.environments.setup import SetupActivities
from activities.environments.signals import EnvironmentSignalActivities
from activities.environments.worktree_facts import WorktreeFactsActivities
from activities.providers.worktree.bring_back import BringBackActivities
from activities.results.branch_updates import BranchUpdateActivities
from activities.results.delivery import ResultsActivities
from activities.results.pr_loop import PullRequestLoopActivities
from activities.runs.processes import RunProcesses
from activities.runs.approvals import ApprovalActivities
from activities.runs.budget import BudgetActivities
from activities.runs.queue import AgentRunActivities
from activities.runs.run_agent import AgentActivities
from activities.runs.session_commands import AgentSessionActivities
from activities.runs.team_runs import TeamAgentRunActivities
from activities.sandbox import bubblewrap, limits
from activities.warm.pool import WarmPoolActivities, start_warm_pools
from activities.warm.refill import WarmRefillActivities
from isolator.settings import Settings
from workers.interceptors import worker_interceptors
from workflows.agent_run import AgentRunWorkflow
from workflows.automation import AutomationFiringWorkflow
from workflows.automation_reconcile import ReconcileAutomationsWorkflow
from workflows.cleanup import CleanupWorkflow, CodebaseCleanupWorkflow
from workflows.cleanup_hosts import HostCleanupWorkflow
from workflows.codebase import RegisterCodebaseWorkflow
from workflows.dashboard import CleanupPreviewWorkflow, ExplainEnvironmentWorkflow
from workflows.environment import EnvironmentWorkflow
from workflows.message import MessageWorkflow
from workflows.move import MoveCodebaseWorkflow
from workflows.pr_loop import PullRequestLoopWorkflow
from workflows.restore import RestoreEnvironmentWorkflow
from workflows.warm_pool import WarmPoolWorkflow

WORKFLOWS = [MessageWorkflow, RegisterCodebaseWorkflow, EnvironmentWorkflow, AgentRunWorkflow, CodebaseCleanupWorkflow,
             HostCleanupWorkflow, CleanupWorkflow, RestoreEnvironmentWorkflow, WarmPoolWorkflow, ExplainEnvironmentWorkflow,
             CleanupPreviewWorkflow, PullRequestLoopWorkflow, AutomationFiringWorkflow, MoveCodebaseWorkflow,
             ReconcileAutomationsWorkflow]

# Workflows run without the SDK's sandbox. The sandbox re-runs compiled code for every activation
# and for every payload it converts: about 6 ms of CPU per message, a third of the worker's work.
# Determinism is guarded where it is cheap: the replay tests run every captured history in the
# strict default sandbox (tests/test_replay.py), which also refuses restricted calls.
WORKFLOW_RUNNER = UnsandboxedWorkflowRunner()
# A workflow task waits this long on the sticky queue of the worker that cached the workflow, then goes to
# any worker of the shared queue (which replays the history): a failover within 2 s (bench/failover.py).
STICKY_TIMEOUT = timedelta(seconds=1)


def build_workers(
    client: Client, pool: asyncpg.Pool, settings: Settings, interceptors: Sequence[Interceptor] = ()
) -> list[Worker]:
    """`interceptors`: added to the production ones (the fault tests add their pause)."""
    bubblewrap.configure(settings)
    limits.configure(settings)
    return [shared_worker(client, pool, settings, interceptors), host_worker(client, pool, settings, interceptors),
            agent_worker(pool, client, settings, interceptors)]


def shared_activities(client: Client, pool: asyncpg.Pool, settings: Settings) -> list[Callable[..., Any]]:
    """What the shared queue serves: the workflows' local activities, and the activities any host can run."""
    isolation = IsolationActivities(settings, ensure_checkout=rebuild.CheckoutRebuilder(settings, pool).ensure_checkout)
    conversations = ConversationActivities(pool, isolation.check_here, settings.host)
    environments = EnvironmentActivities(pool, settings, client)
    archives = ArchiveActivities(pool, settings)
    signals = EnvironmentSignalActivities(client, settings.task_queue)
    codebases = CodebaseActivities(settings, pool, client)
    replies = ReplyActivities(pool, deliverers(settings, pool))
    agent_runs = AgentRunActivities(settings, pool, client, replies)
    agent_sessions = AgentSessionActivities(pool, settings.agent_executable)
    results = ResultsActivities(settings, pool, replies)
    loop = PullRequestLoopActivities(settings, pool, client)
    warm = WarmPoolActivities(pool, settings, client)
    approvals = ApprovalActivities(pool, replies)
    budget = BudgetActivities(pool, settings)
    automations = AutomationActivities(settings, pool, client, replies)
    return [
        # local activities run on the workflow's worker
        conversations.record_conversation,
        conversations.link_conversation_codebase,
        conversations.close_conversation,
        conversations.move_conversation,
        RefusalActivities(pool).claim_refusal_reply,
        environments.find_environment_by_identity,
        environments.count_environments,
        environments.retire_environment,
        environments.attach_conversation,
        environments.record_environment,
        environments.list_environments,
        environments.find_named_environment,
        environments.mark_environment_destroyed,
        environments.record_setup_state,
        environments.environment_details,
        archives.list_removed_environments,
        archives.find_removed_environment,
        archives.find_returning_environment,
        archives.record_restored_environment,
        archives.record_brought_back,
        archives.mark_environment_hibernated,
        archives.mark_environment_awake,
        archives.find_expired_archives,
        archives.mark_archives_pruned,
        archives.record_disk_use,
        codebases.find_codebase,
        codebases.record_codebase,
        codebases.list_codebases, *moving.MoveActivities(settings, pool, client, replies).shared_steps(),
        HostWorkerActivities(client).host_has_worker,
        # the disk and git of the codebases on this host, worked on locally
        isolation.validate_environment,
        isolation.create_worktree_here,
        isolation.find_adoptable_worktree,
        PortActivities(pool, settings).allocate_ports_here,
        HostSeenActivities(pool, settings.host_wait_hours).host_seen,
        warm.claim_warm_worktree_here,
        warm.view_warm_pool,
        signals.attach_environment,
        signals.signal_environment,
        agent_runs.queue_agent_run,
        agent_runs.drop_agent_runs,
        budget.daily_budget,
        budget.raise_daily_budget,
        *AutomationCommandActivities(settings, pool, client).chat_steps(),
        agent_sessions.reset_agent_session,
        agent_sessions.agent_session_summary,
        loop.find_pull_request_work,
        loop.count_fix_attempt,
        loop.record_ci,
        loop.stop_fixing,
        loop.run_end,
        loop.open_pull_requests_on,
        # normal activities on the shared queue
        signals.destroy_environment,
        signals.set_up_again,
        signals.wait_for_setup,
        signals.wake_environment,
        agent_runs.stop_agent_runs,
        agent_runs.record_interrupted_run,
        approvals.close_approval,
        approvals.queue_continuation,
        replies.send_reply,
        PlatformActivities(settings).complete_hints,
        signals.ask_pull_request,
        results.publish_results,
        results.pull_request_status,
        loop.ask_pull_request_loop,
        loop.read_review_feedback,
        loop.read_ci_failure,
        loop.read_ci_state,
        loop.reply_in_threads,
        loop.note_on_pull_request,
        loop.mark_ready_when_green,
        loop.read_mergeable,
        automations.prepare_firing,
        automations.firing_run,
        automations.wait_for_run,
        automations.note_firing,
        automations.finish_firing,
        RepositoryAutomationActivities(settings, pool, client).reconcile_automations,
    ]


def host_activities(pool: asyncpg.Pool, settings: Settings, client: Client | None = None) -> list[Callable[..., Any]]:
    """What the host's queue serves: the git work of the codebases this host holds, and their set-up."""
    isolation = IsolationActivities(settings, ensure_checkout=rebuild.CheckoutRebuilder(settings, pool).ensure_checkout)
    codebases = CodebaseActivities(settings, pool)
    replies = ReplyActivities(pool, deliverers(settings, pool))
    setup = SetupActivities(settings, replies)
    team_runs = TeamAgentRunActivities(pool, replies)
    return [
        setup.read_repository_setup,
        setup.run_commands,
        PortActivities(pool, settings).allocate_ports,
        isolation.validate_environment,
        isolation.find_adoptable_worktree,
        *isolation.host_operations,
        BringBackActivities(settings).bring_archive_into_worktree,
        codebases.inspect_repository,
        codebases.clone_repository, *moving.MoveActivities(settings, pool).host_steps(),  # a move's two hosts
        team_runs.begin_team_run,
        team_runs.end_team_run,
        WorktreeFactsActivities().explain_worktree,
        RepositoryAutomationActivities(settings).read_committed_automations,
        ResultsActivities(settings, pool, replies).push_results,
        BranchUpdateActivities(settings, pool).take_in_branch_updates,
        CodebaseViewActivities(EnvironmentActivities(pool, settings), isolation).count_worktrees,
        WarmPoolActivities(pool, settings, client).claim_warm_worktree,
        WarmRefillActivities(pool, settings).refill_warm_pool,
        HostAnswerActivities(settings.host).host_answers,
        WarmRefillActivities(pool, settings).trim_warm_pool,
    ]


def shared_worker(
    client: Client, pool: asyncpg.Pool, settings: Settings, interceptors: Sequence[Interceptor] = ()
) -> Worker:
    """The workflows and the shared queue's activities."""
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=WORKFLOWS,
        workflow_runner=WORKFLOW_RUNNER,
        activities=shared_activities(client, pool, settings),
        max_concurrent_activities=100,
        max_concurrent_local_activities=100,
        # A workflow cached on a worker that died is handed to another after this, not the default 10 s:
        # a conversation on a live host does not wait for a dead one's cache.
        sticky_queue_schedule_to_start_timeout=STICKY_TIMEOUT,
        interceptors=worker_interceptors(interceptors),
    )


def host_worker(
    client: Client, pool: asyncpg.Pool, settings: Settings, interceptors: Sequence[Interceptor] = ()
) -> Worker:
    """This host's queue, `{queue}@{host}`."""
    return Worker(
        client,
        task_queue=settings.host_task_queue(),
        activities=host_activities(pool, settings, client),
        max_concurrent_activities=50,
        # A heartbeat every 2 s, not every 8 s (0.8 x the 10 s timeout): a slow machine's late one
        # still arrives in time, and a long set-up is not taken for a dead worker's.
        max_heartbeat_throttle_interval=timedelta(seconds=2),
        default_heartbeat_throttle_interval=timedelta(seconds=2),
        graceful_shutdown_timeout=timedelta(seconds=settings.worker_drain_seconds),  # a set-up in flight ends
        interceptors=worker_interceptors(interceptors),
    )


def agent_activities(pool: asyncpg.Pool, settings: Settings,
                     processes: RunProcesses | None = None) -> list[Callable[..., Any]]:
    """What the host's agent queue serves: the runs of the coding agent."""
    processes = processes or RunProcesses(settings.worktree_base / ".runs")
    return [AgentActivities(settings, pool, ReplyActivities(pool, deliverers(settings, pool)), processes).run_agent]


def agent_worker(
    pool: asyncpg.Pool, client: Client, settings: Settings, interceptors: Sequence[Interceptor] = ()
) -> Worker:
    """This host's agent runs, `{queue}@{host}/agents`, AGENT_MAX_CONCURRENT at a time; the others
    wait in the queue, in order. What a worker killed during a run left running is killed first."""
    processes = RunProcesses(settings.worktree_base / ".runs")
    processes.reap()
    return Worker(
        client,
        task_queue=settings.agent_task_queue(),
        activities=agent_activities(pool, settings, processes),
        max_concurrent_activities=settings.agent_max_concurrent,
        # Every heartbeat reaches the server: a `/stop` (a cancellation) comes back with its answer.
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        default_heartbeat_throttle_interval=timedelta(seconds=1),
        # A stop (SIGTERM, `isolator worker --drain`) takes no new run and lets those in flight finish for
        # WORKER_DRAIN_SECONDS; only then are they cancelled, and said interrupted.
        graceful_shutdown_timeout=timedelta(seconds=settings.worker_drain_seconds),
        interceptors=worker_interceptors(interceptors),
    )


@asynccontextmanager
async def running_workers(
    client: Client, pool: asyncpg.Pool, settings: Settings, interceptors: Sequence[Interceptor] = ()
) -> AsyncIterator[list[Worker]]:
    """Run the workers until the block exits, then shut them down; a lost disk's checkouts are rebuilt first."""
    await rebuild.CheckoutRebuilder(settings, pool, ReplyActivities(pool, deliverers(settings, pool)), client).rebuild_missing()
    workers = build_workers(client, pool, settings, interceptors)
    tasks = [asyncio.create_task(worker.run()) for worker in workers]
    await start_warm_pools(client, pool, settings)
    try:
        yield workers
    finally:
        await asyncio.gather(*(worker.shutdown() for worker in workers), return_exceptions=True)
        await asyncio.gather(*tasks, return_exceptions=True)
