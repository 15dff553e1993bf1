"""Agent runs as the workflows see them: which agent a codebase runs, handing a message to its
environment's queue, `/stop`, and the record of runs that were dropped or interrupted."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
from temporalio import activity
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities.chat.replies import ReplyActivities
from activities.runs.records import RunRecords
from isolator.contracts.agent import (
    AgentPlan,
    DroppedRuns,
    InterruptedRun,
    Queued,
    QueueRunInput,
    RunRequest,
    StopReport,
    StopRequest,
    WaitingRequest,
    no_agent_key,
    setup_failed_key,
)
from isolator.contracts.environment import conversation_key, environment_workflow_id
from isolator.contracts.message import ReplyInput
from isolator import tracing
from isolator.settings import Settings

# How long a run waits for its environment's workflow to start (inside the local activity's 10 s).
WORKFLOW_START_WAIT_SECONDS = 8.0
# Run ids are made from the message's key, so that every retry of the hand-off names the same run.
_RUN_NAMESPACE = uuid.UUID("0b7c3d52-52a4-4d0e-9a43-6f1e0c1e7a16")


def run_id_of(key: str) -> str:
    return str(uuid.uuid5(_RUN_NAMESPACE, key))


def plan_for(settings: Settings, codebase_command: list[str] | None, codebase_agent: dict | None = None) -> AgentPlan:
    """The codebase's own `agent` or `agent_command` when set (an empty command: none), else
    AGENT_WORKFLOW, else AGENT (with AGENT_EXECUTABLE and AGENT_ARGS), else AGENT_COMMAND."""
    timeout = settings.agent_timeout_minutes
    if codebase_agent:
        driver = codebase_agent["agent"]
        program = [codebase_agent.get("executable") or driver, *codebase_agent.get("args", [])]
        return AgentPlan("command", program, "the codebase's `agent`", timeout_minutes=timeout, driver=driver)
    if codebase_command is not None:
        if not codebase_command:
            return AgentPlan("none")
        return AgentPlan("command", list(codebase_command), "the codebase's `agent_command`",
                         timeout_minutes=timeout)
    if settings.agent_workflow:
        return AgentPlan("workflow", source="AGENT_WORKFLOW", workflow=settings.agent_workflow,
                         task_queue=settings.agent_workflow_task_queue, timeout_minutes=timeout)
    driver = settings.agent_driver or ("command" if settings.agent_command else None)
    if driver == "command" and settings.agent_command:
        return AgentPlan("command", [*settings.agent_command, *settings.agent_args], "AGENT_COMMAND",
                         timeout_minutes=timeout)
    if driver in ("claude", "codex", "aider"):
        program = [settings.agent_executable or driver, *settings.agent_args]
        return AgentPlan("command", program, "AGENT_EXECUTABLE" if settings.agent_executable else "AGENT",
                         timeout_minutes=timeout, driver=driver)
    return AgentPlan("none")


class AgentRunActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, client: Client, replies: ReplyActivities) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client
        self.records = RunRecords(pool)
        self.replies = replies

    @activity.defn
    async def queue_agent_run(self, request: QueueRunInput) -> Queued:
        """Record the run and queue it in its environment's workflow; with no agent, nothing."""
        row = await self.pool.fetchrow("SELECT agent_command, agent FROM codebases WHERE id = $1", request.codebase_id)
        plan = plan_for(self.settings, row["agent_command"] if row else None, row["agent"] if row else None)
        if plan.kind == "none":
            if request.answered:
                return Queued("no_agent")
            # Claimed here, atomically: messages of one conversation arriving together tell it once;
            # the same message, run again, claims it again. The reply keyed so delivers into this row
            # (deliver_once), and writes its text there.
            claimed = await self.pool.fetchval(
                """INSERT INTO outbound_messages AS o (idempotency_key, platform, platform_conversation_id, body, claimed_by)
                   VALUES ($1, $2, $3, '', $4)
                   ON CONFLICT (idempotency_key) DO UPDATE SET claimed_by = EXCLUDED.claimed_by
                   WHERE o.claimed_by = EXCLUDED.claimed_by RETURNING 1""",
                no_agent_key(request.platform, request.conversation_id), request.platform, request.conversation_id,
                request.key)
            return Queued("no_agent", tell_no_agent=claimed is not None)
        run_id = run_id_of(request.key)
        await self.records.queued(run_id, request.environment_id, request.platform, request.conversation_id,
                                  request.text, tracing.current_trace_id())
        run = RunRequest(run_id, request.key, conversation_key(request.platform, request.conversation_id),
                         request.text, plan, merge_base=request.merge_base, user=request.user,
                         answers=await self._question_it_answers(request), trace=tracing.carrier())
        queued = await self._queue_in_workflow(request.environment_id, run, request.key)
        if queued.outcome == "gone":
            await self.records.dropped([run_id])
        elif queued.outcome == "queued":
            queued.tell_setup_failed = await self.pool.fetchval(
                """SELECT setup_state = 'failed' AND NOT EXISTS (SELECT 1 FROM outbound_messages WHERE idempotency_key = $2)
                   FROM isolation_environments WHERE id = $1""",
                request.environment_id, setup_failed_key(request.environment_id, request.platform,
                                                         request.conversation_id)) or False
            if queued.ahead:
                queued.waiting_for = await self._request_ahead(request.environment_id)
        return queued

    async def _queue_in_workflow(self, environment_id: str, run: RunRequest, key: str) -> Queued:
        """The run, queued in its environment's workflow. A message of the same conversation sent at once
        records the environment a moment before it starts its workflow (workflows/provisioning.py,
        `create` then `_announce`): a run queued in between waits for that workflow, never taken for gone."""
        handle = self.client.get_workflow_handle(environment_workflow_id(environment_id))
        waited, pause = 0.0, 0.02
        while True:
            try:
                return await handle.execute_update("queue_run", run, id=key, result_type=Queued)
            except RPCError as error:
                if error.status != RPCStatusCode.NOT_FOUND:
                    raise
            if waited >= WORKFLOW_START_WAIT_SECONDS or not await self._recorded_live(environment_id):
                return Queued("gone", run.run_id)  # its workflow has ended (or never came): the environment is gone
            await asyncio.sleep(pause)
            waited, pause = waited + pause, min(pause * 2, 0.5)

    async def _recorded_live(self, environment_id: str) -> bool:
        return bool(await self.pool.fetchval(
            "SELECT status IN ('active', 'hibernated') FROM isolation_environments WHERE id = $1", environment_id))

    async def _request_ahead(self, environment_id: str) -> WaitingRequest | None:
        """The request a run of the worktree waits on (its run holds the queue until it is answered), if any."""
        row = await self.pool.fetchrow(
            """SELECT a.code, a.summary, a.platform || ':' || a.conversation_id AS conversation
               FROM approvals a JOIN agent_runs r ON r.id = a.run_id
               WHERE a.environment_id = $1 AND a.state = 'pending' AND r.status IN ('running', 'waiting')
               ORDER BY a.created_at LIMIT 1""", environment_id)
        return WaitingRequest(row["code"], row["summary"], row["conversation"]) if row is not None else None

    async def _question_it_answers(self, request: QueueRunInput) -> str | None:
        """The question its sender was asked in this conversation and has not answered, if any: the request is
        recorded before it is sent, so a reply to it finds it even before the run that asked has ended."""
        return await self.pool.fetchval(
            """SELECT id FROM approvals WHERE environment_id = $1 AND platform = $2 AND conversation_id = $3
                 AND kind = 'question' AND state = 'pending' AND (requested_by IS NULL OR requested_by = $4)
               ORDER BY created_at DESC LIMIT 1""",
            request.environment_id, request.platform, request.conversation_id, request.user)

    @activity.defn
    async def stop_agent_runs(self, request: StopRequest) -> StopReport:
        """`/stop`: the environment's workflow stops the conversation's run and drops its queue."""
        handle = self.client.get_workflow_handle(environment_workflow_id(request.environment_id))
        try:
            return await handle.execute_update("stop_runs", request, id=request.key, result_type=StopReport)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            return StopReport()

    @activity.defn
    async def drop_agent_runs(self, dropped: DroppedRuns) -> None:
        await self.records.dropped(dropped.run_ids)

    @activity.defn
    async def record_interrupted_run(self, run: InterruptedRun) -> None:
        """A run whose worker died: recorded as interrupted, and its conversation told, once. A run that
        recorded its own end (a worker shut down gracefully lets it finish its answer) has said it already."""
        # A request it sent just before its worker died waits for nothing: closed, not left pending.
        await self.pool.execute("UPDATE approvals SET state = 'stopped', answered_at = now() "
                                "WHERE run_id = $1 AND state = 'pending'", run.run_id)
        if not await self.records.finished(run.run_id, "interrupted", None, [], None):
            return
        platform, conversation_id = run.conversation.split(":", 1)
        text = (f"The agent's run in `{run.branch}` was interrupted: {run.reason}. It is not started again "
                "by itself; send your message again to retry.")
        await self.replies.deliver_once(ReplyInput(platform, conversation_id, text, f"agent-run:{run.run_id}:interrupted"))
