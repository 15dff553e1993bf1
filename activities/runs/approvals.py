"""The `approvals` rows and their messages (docs/approvals.md): a run records what it asks and sends the
request with its buttons; the environment's workflow, once answered, closes the row and edits the
request to its answer; a continuation run is recorded to go on with it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import uuid
from pathlib import Path
from typing import Callable

import asyncpg
from temporalio import activity

from activities.chat.replies import ReplyActivities
from activities.providers.worktree.base import Base, committed_config
from activities.runs.agents.base import Relay, RelayMaker
from activities.runs.agents.configs import conversations_folder
from activities.runs.records import RunRecords
from isolator import approval_texts, tracing
from isolator.approval_rules import ApprovalRules, conversation_rule, rules_from_lists
from isolator.contracts.agent import RunRequest
from isolator.contracts.approvals import AllowedCalls, ApprovalAsk, ApprovalKind, CloseApprovalInput, ToolCall
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import AgentRunInput
from isolator.contracts.message import ReplyInput
from isolator.repository_config import read_setup
from isolator.settings import Settings

_APPROVAL_NAMESPACE = uuid.UUID("5d0c1b7e-6f0e-4a51-9a55-2c0d3b7a4e21")


def approval_id_of(run_id: str) -> str:
    """One request per run (the run ends its turn at the first): a retry records the same one."""
    return str(uuid.uuid5(_APPROVAL_NAMESPACE, run_id))


def code_of(approval_id: str) -> str:
    """Eight letters and digits, easy to type in a comment (`/approve K7P2QXAB`)."""
    return base64.b32encode(hashlib.sha256(approval_id.encode()).digest()).decode()[:8]


async def repository_rules(codebase: Codebase) -> ApprovalRules:
    """`[approvals]` of `.isolator.toml` as committed on the default branch (origin's when fetched), never
    the worktree's copy, which the agent could edit. A file with a problem adds nothing (its set-up says why)."""
    repository = Path(codebase.canonical_path)
    text = None
    for revision in (f"refs/remotes/origin/{codebase.default_branch}", f"refs/heads/{codebase.default_branch}"):
        if (text := await committed_config(repository, Base(revision))) is not None:
            break
    setup = read_setup(text)
    if setup.problem is not None:
        return ApprovalRules()
    return rules_from_lists(setup.config.approvals_ask, setup.config.approvals_deny)


class ApprovalRecords:
    def __init__(self, pool: asyncpg.Pool, replies: ReplyActivities, settings: Settings) -> None:
        self.pool = pool
        self.replies = replies
        self.settings = settings

    async def conversation_rules(self, platform: str, conversation_id: str) -> list[str]:
        """What people allowed for this conversation ("allow for this conversation")."""
        rows = await self.pool.fetch("SELECT rule FROM conversation_allow_rules WHERE platform = $1 AND "
                                     "conversation_id = $2 ORDER BY granted_at", platform, conversation_id)
        return [row["rule"] for row in rows]

    async def relays(self, request: AgentRunInput, relay: RelayMaker) -> Callable[[], Relay]:
        """What answers the agent's permission requests (Claude Code's prompts and questions, Codex's approval
        requests) in the run, a new `relay` per call of the agent: AGENT_APPROVALS bounding the repository's
        `[approvals]`, the calls a person allowed this run, and the conversation's own rules. Read while the
        run's worktree is staged."""
        platform, conversation_id = request.run.conversation.split(":", 1)
        given = request.run.allowed or AllowedCalls()
        kept, repository = await asyncio.gather(self.conversation_rules(platform, conversation_id),
                                                repository_rules(request.environment.codebase))
        rules, allowed = self.settings.agent_approvals.bounded_by(repository), AllowedCalls(given.calls,
                                                                                              [*given.rules, *kept])
        return lambda: relay(rules, allowed, request.environment.working_path)

    async def ask_person(self, request: AgentRunInput, relay: Relay | None, spent_usd: float,
                         started_at: float, session_dir: Path | None = None) -> ApprovalAsk:
        """A paused run's request (the relay's call, else its budget), recorded and sent with its buttons,
        once. `session_dir`: its conversation's session folder, where its Claude Code writes its plans."""
        run, worktree = request.run, request.environment.working_path
        kind: ApprovalKind = relay.kind if relay is not None and relay.asked is not None else "budget"
        call = relay.asked if relay is not None else None
        plans = conversations_folder("claude", session_dir) / "plans" if session_dir else None
        plan = _plan_text(plans, started_at, call) if kind == "plan" else ""
        cap = self.settings.agent_max_cost_usd or 0.0
        approval_id = approval_id_of(run.run_id)
        code = code_of(approval_id)
        text = approval_texts.request_text(kind, call, worktree, code, run.text, run.user, plan, spent_usd, cap)
        subject = str((call.input.get("command") or call.input.get("file_path") or "") if call else "")[:80]
        summary = {"tool": f"the call {call.tool_name if call else ''} `{subject}`", "question": "the agent's question",
                   "plan": "the agent's plan", "budget": f"the run's budget (${cap:g})"}[kind]
        platform, conversation_id = run.conversation.split(":", 1)
        message_key = f"approval:{approval_id}"
        await self.pool.execute(
            """INSERT INTO approvals (id, code, run_id, environment_id, platform, conversation_id, requested_by, kind,
                                      tool_name, tool_input, tool_use_id, suggested_rule, summary, message_key)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING""",
            approval_id, code, run.run_id, request.environment.environment_id, platform, conversation_id, run.user,
            kind, call.tool_name if call else None, call.input if call else {}, call.tool_use_id if call else None,
            call.suggested_rule if call else None, summary, message_key)
        await self.replies.deliver_once(ReplyInput(platform, conversation_id, text, message_key,
                                                   buttons=approval_texts.buttons(kind, code, call)))
        return ApprovalAsk(approval_id, code, kind, run.conversation, run.user, call, summary,
                           self.settings.approval_timeout_hours)


def _plan_text(folder: Path | None, since: float, call: ToolCall | None) -> str:
    """ExitPlanMode's plan: in the call the model made, else in the file Claude Code wrote it to in its
    plans' folder (the newest written during the run)."""
    if call is not None and str(call.input.get("plan", "")).strip():
        return str(call.input["plan"])
    plans = [path for path in folder.glob("*.md") if path.stat().st_mtime >= since - 1] if folder else []
    if plans:
        return max(plans, key=lambda path: path.stat().st_mtime).read_text(errors="replace")[:6000]
    return ""


class ApprovalActivities:
    def __init__(self, pool: asyncpg.Pool, replies: ReplyActivities) -> None:
        self.pool = pool
        self.replies = replies
        self.runs = RunRecords(pool)

    @activity.defn
    async def close_approval(self, closing: CloseApprovalInput) -> None:
        """The answer recorded (once: a retry finds the row closed and only finishes the message), the
        request edited to it, and a rule granted for the conversation kept."""
        decision = closing.decision
        row = await self.pool.fetchrow(
            """SELECT a.*, e.working_path FROM approvals a JOIN isolation_environments e ON e.id = a.environment_id
               WHERE a.id = $1""", decision.approval_id)
        if row is None:
            return
        call = ToolCall(row["tool_name"], row["tool_input"] or {}, row["tool_use_id"] or "", row["suggested_rule"]) \
            if row["tool_name"] else None
        answer = approval_texts.answer_of(decision, call)
        if closing.ends_run:  # first: once the request shows its answer, the run's record says it too
            await self.runs.wait_ended(str(row["run_id"]))
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(
                """UPDATE approvals SET state = $2, choice = $3, answered_by = $4, answered_at = now(), answer_text = $5
                   WHERE id = $1 AND state = 'pending'""",
                decision.approval_id, closing.state, decision.choice,
                None if decision.choice in ("timeout", "stopped") else decision.by, answer)
            if decision.choice == "conversation" and call is not None:
                await connection.execute(
                    """INSERT INTO conversation_allow_rules (platform, conversation_id, rule, granted_by)
                       VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING""",
                    row["platform"], row["conversation_id"], conversation_rule(call, row["working_path"]), decision.by)
        request = await self.pool.fetchval("SELECT body FROM outbound_messages WHERE idempotency_key = $1",
                                           row["message_key"])
        if request is not None:
            await self.replies.deliver_once(ReplyInput(
                row["platform"], row["conversation_id"], approval_texts.answered_text(request, decision, call),
                f"{row['message_key']}:answered", updates=row["message_key"]))

    @activity.defn
    async def queue_continuation(self, request: AgentRunInput) -> None:
        """The run that goes on with the answer: recorded as queued, as a message's run is."""
        run: RunRequest = request.run
        platform, conversation_id = run.conversation.split(":", 1)
        await self.runs.queued(run.run_id, request.environment.environment_id, platform, conversation_id, run.text,
                               tracing.current_trace_id())

