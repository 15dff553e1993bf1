"""One run of the coding agent in its worktree, on the codebase's host (its `/agents` queue, which
takes AGENT_MAX_CONCURRENT at once). The run's driver (activities/runs/agents/) builds the agent's command line for the conversation's
session (activities/runs/sessions.py) and reads its output: the progress lines and the answer are
streamed to the conversation (activities/runs/answer.py) and kept with the run; its raw output
(an agent's event stream) and standard error are the run's log. An agent silent for WORKING_AFTER
seconds gets a working line, updated in place. The run ends done, failed, timed out, stopped (the
activity cancelled: `/stop`, a forced removal) or waiting for a person's answer (activities/runs/
approvals.py), and its last message says so, with what changed in the worktree and what it cost.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import tempfile
import time
from pathlib import Path

import asyncpg
from temporalio import activity

from activities.chat.replies import ReplyActivities
from activities.environments.setup import command_variables
from activities.git.working_trees import Changes, StagedTree, WorkingTree, changes_since, staged_tree
from activities.providers.worktree.archive_push import checkpoint
from activities.runs.agents import DRIVERS, Driver
from activities.runs.agents.base import AgentError, GaveUp, Reader, Relay, SessionLost, Turn, Usage
from activities.runs.agents.configs import agent_place
from activities.runs.approvals import ApprovalRecords
from activities.runs.budget import raised_today
from activities.runs.cost_caps import CostCap, OverBudget, cost_cap
from activities.runs.answer import AnswerStream
from activities.runs.outcome import Ending
from activities.runs.output import RunLog, Silence, keep_flushing, stop_tasks, to_its_end
from activities.runs.processes import RunProcesses
from activities.runs.records import Capture, RunRecords
from activities.runs.refusals import hear_refusals
from activities.runs.sessions import AgentSessions, Session, renews_in
from activities.runs.verbosity import shows_steps_only
from activities.sandbox.user_programs import CannotStart, run_user_program
from isolator.contracts.agent import AgentRunReport
from isolator.contracts.approvals import ApprovalAsk
from isolator.contracts.environment import AgentRunInput
from isolator.settings import Settings

__all__ = ["AgentActivities", "Ending", "changes_or_none", "strip_mention"]

NEW_SESSION_NOTICE = "_The agent no longer knew this conversation's session: this message started a new one._"
MOVED_NOTICE = "_New agent session: this conversation works in another worktree now._"


class AgentActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, replies: ReplyActivities,
                 processes: RunProcesses) -> None:
        self.settings = settings
        self.records = RunRecords(pool)
        self.sessions = AgentSessions(pool)
        self.replies = replies
        self.processes = processes
        self.approvals = ApprovalRecords(pool, replies, settings)

    @activity.defn
    async def run_agent(self, request: AgentRunInput) -> AgentRunReport:
        run, environment = request.run, request.environment
        platform, conversation_id = run.conversation.split(":", 1)
        driver = DRIVERS[run.plan.driver]
        worktree = Path(environment.working_path)
        answer = AnswerStream(self.replies.deliver_once, platform, conversation_id, run.run_id,
                              steps_only=shows_steps_only(platform, driver.streams_events))
        output = Capture(self.records, run.run_id, "output")
        errors = RunLog(Capture(self.records, run.run_id, "log"))
        started, started_at = time.monotonic(), time.time()
        ending = Ending(started, driver=driver.name)
        # What the run changes is measured against the worktree as it was: the agent starts once that is
        # staged, its sandbox made meanwhile; its tree is written after the run.
        scratch = tempfile.TemporaryDirectory(prefix="isolator-before-")
        before = asyncio.ensure_future(staged_tree(worktree, Path(scratch.name)))
        relays = asyncio.ensure_future(self.approvals.relays(request, driver.relay)) if driver.relay else None
        reader: Reader = driver.reader(worktree)
        relay: Relay | None = None
        waiting: ApprovalAsk | None = None
        session: Session | None = None
        notices: list[str] = []  # about the session, above the answer
        posting = asyncio.create_task(answer.keep_posting())
        ticking = asyncio.create_task(keep_flushing(output, errors.capture))
        # Marked running meanwhile, not first (a database round trip less before the agent starts);
        # awaited before the run's end is recorded.
        marked = asyncio.ensure_future(self.records.started(run.run_id))
        cap = await cost_cap(self.records.pool, self.settings, platform, conversation_id)
        try:
            refusal = await self._over_daily_budget(environment.codebase.id)
            if refusal:
                ending.cannot_start(refusal)
                return AgentRunReport(run.run_id, ending.status, None, time.monotonic() - started)
            session = await self.sessions.for_run(platform, conversation_id, driver.name, environment.environment_id)
            if session.renewed == "moved":
                notices.append(MOVED_NOTICE + "\n")
                answer.add(notices[-1])
            for attempt in range(2):
                reader = driver.reader(worktree)
                relay = (await relays)() if relays is not None else None
                await self._turn(request, driver, session, reader, answer, output, errors, ending, before, cap, relay)
                if reader.error is None or reader.error.kind != "session" or attempt:
                    break
                # The agent lost the session (its home was cleared): once more, in a new one.
                session = await self.sessions.start(platform, conversation_id, driver.name, environment.environment_id)
                notices.append(NEW_SESSION_NOTICE + "\n")
                answer.add(notices[-1])
        except CannotStart as error:
            ending.cannot_start(f"{error}; check {run.plan.source}")
        except OverBudget as over:  # it asks to go on (docs/approvals.md), or an automation's stops there
            ending.waits_for_answer("budget") if over.cap.asks else ending.stopped_at_cost(AgentError("budget", str(over)))
        except GaveUp:  # the reader stopped the agent; its error says why
            ending.status = "failed"
        except asyncio.CancelledError:
            if activity.is_worker_shutdown():
                ending.service_restarted()
            else:
                ending.stopped()
            raise
        finally:
            self.processes.forget(run.run_id)
            if relays is not None and not relays.done():  # a run that never started its agent
                relays.cancel()

            async def wrap_up() -> None:
                await marked
                await stop_tasks(posting, ticking)
                changes = await changes_or_none(worktree, await _taken(before), Path(scratch.name))
                if relay is not None and relay.asked is not None and ending.status not in ("stopped", "interrupted"):
                    ending.waits_for_answer(relay.kind)  # its turn ended there, by the relay's interrupt
                elif reader.error is not None and reader.error.kind == "budget" and cap.asks and cap.usd:
                    ending.waits_for_answer("budget")
                elif reader.error is not None and ending.error is None:
                    ending.failed(reader.error)
                if driver.streams_events and ending.problem is None:
                    # An error's words are said once, in the closing lines, not also as its answer.
                    said = final_answer(reader)
                    final = "".join(notices) + ("" if ending.error and said.strip() in ending.error.detail else said)
                    answer.replace(final)
                    await output.add(f"\n{final}")
                await output.flush()
                await errors.capture.flush()
                await answer.finish(self._with_page_link(ending.summary(changes, errors.last_lines(), reader.usage), run.run_id),
                                    f"The rest of the answer is in the run's record: `GET /api/runs/{run.run_id}`.")
                if ending.status == "waiting":
                    nonlocal waiting
                    waiting = await self.approvals.ask_person(request, relay, reader.usage.cost_usd or 0.0, started_at,
                                                              session and self.settings.agent_sessions_dir / session.id)
                await asyncio.gather(self._record(run.run_id, platform, conversation_id, driver, session, reader, ending, changes), checkpoint(self.settings, environment))  # noqa: E501 - ARCHIVE_PUSH: the work at origin too

            # A `/stop` that arrives once the agent has ended is too late: cut halfway, the wrap-up left the
            # run "running" and the answer without its end, and the stop claimed a run that had finished.
            # The run keeps its ending, and the workflow hears it (a stop during the run still raises).
            try:
                await to_its_end(wrap_up())
            finally:
                scratch.cleanup()
        return AgentRunReport(run.run_id, ending.status, ending.exit_code, time.monotonic() - started, waiting)

    async def _turn(self, request: AgentRunInput, driver: Driver, session: Session, reader: Reader,
                    answer: AnswerStream, output: Capture, errors: RunLog, ending: Ending,
                    before: asyncio.Future[StagedTree], cap: CostCap, relay: Relay | None = None) -> None:
        """One call of the agent, its output read by `reader` as it arrives; it starts once `before` is taken."""
        run, environment = request.run, request.environment
        platform, conversation_id = run.conversation.split(":", 1)
        session_dir = self.settings.agent_sessions_dir / session.id
        session_dir.mkdir(parents=True, exist_ok=True)
        turn = Turn(strip_mention(run.text, self.settings.bot_mention), Path(environment.working_path),
                    session.agent_session_id, session_dir, session.turns + 1, cap.usd,
                    relay)
        if relay is not None:
            reader.relay = relay  # type: ignore[attr-defined]  # the reader hands it the agent's requests
        try:
            invocation = driver.invocation(run.plan.argv, turn)
        except SessionLost as lost:
            reader.error = AgentError("session", str(lost))  # the run goes on in a new session
            return
        if hasattr(reader, "baseline"):  # an agent that counts usage per thread (Codex)
            reader.baseline = Usage(**session.agent_usage)
        variables = {
            **command_variables(environment, request.ports),
            "ISOLATOR_MESSAGE": run.text, "ISOLATOR_PLATFORM": platform, "ISOLATOR_CONVERSATION": conversation_id,
            "ISOLATOR_RUN_ID": run.run_id, **invocation.env,
        }
        place = agent_place(driver.name, invocation.argv, run.plan.argv, session_dir, self.settings.agent_home, variables)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        errors.new_turn()
        silence = Silence(answer)
        limit = cap.usd
        hear_refusals(answer, reader)  # what its sandbox refuses it is said at once (activities/runs/refusals.py)

        async def on_output(chunk: bytes) -> None:
            text = decoder.decode(chunk)
            if driver.streams_events:
                await errors.capture.add(text)  # the whole event stream is the run's log
            shown = reader.feed(text)
            if shown and any(part.strip() for part in shown):
                silence.spoke()
            for part in shown:
                part = part if not driver.streams_events else part.rstrip("\n") + "\n"
                if not answer.steps_only:
                    answer.add(part)
                await output.add(part)
            if answer.steps_only:
                answer.steps(reader.did)
            if limit is not None and (reader.usage.cost_usd or 0.0) > limit:
                raise OverBudget(f"this run cost ${reader.usage.cost_usd:.2f}, past {cap.source} (${limit:g})", cap)

        watching = asyncio.create_task(silence.watch())
        try:
            finished = await run_user_program(
                invocation.argv, turn.worktree, place.env, run.plan.timeout_minutes * 60.0,
                on_output=on_output, on_error=errors.add, stdin=invocation.stdin,
                on_start=lambda group: self.processes.record(run.run_id, group), writable_paths=place.writable,
                readable_paths=place.readable, config_files=place.config_files, after=before, span="agent process",
            )
        finally:
            await stop_tasks(watching)
            answer.working("")
        for part in reader.feed(decoder.decode(b"", final=True)):
            if not answer.steps_only:
                answer.add(part)
            await output.add(part)
        reader.end(finished.exit_code, errors.telling_lines())
        reader.session_id = reader.session_id or invocation.session_id or (None if driver.names_sessions else session.id)
        ending.finished(finished)

    def _with_page_link(self, summary: str, run_id: str) -> str:
        """The run's dashboard page after the summary's headline (a long log tail may be cut, not it),
        when PUBLIC_URL says where users reach this server."""
        if not self.settings.public_url:
            return summary
        headline, _, rest = summary.partition("\n")
        link = f"The run, live and in full: {self.settings.public_url.rstrip('/')}/runs/{run_id}"
        return "\n".join(part for part in (headline, link, rest) if part)

    async def _over_daily_budget(self, codebase_id: str) -> str | None:
        budget = self.settings.agent_daily_budget_usd
        if budget is None:
            return None
        spent = await self.sessions.spent_today(codebase_id)
        budget += await raised_today(self.records.pool, codebase_id)  # `/budget +10`
        if spent < budget:
            return None
        hours, rest = divmod(int(renews_in().total_seconds()), 3600)
        return (f"this codebase has spent ${spent:.2f} of its daily budget of ${budget:.2f} "
                f"(AGENT_DAILY_BUDGET_USD); it renews at midnight UTC, in {hours} h {rest // 60} min, or an admin "
                "raises it for today with `/budget +10`")

    async def _record(self, run_id: str, platform: str, conversation_id: str, driver: Driver, session: Session | None,
                      reader: Reader, ending: Ending, changes: Changes | None) -> None:
        """Usage and session first: a reader of the run's end finds them there."""
        if session is not None:
            await self.records.usage(run_id, driver.name, reader.session_id, reader.usage)
            if ending.problem is None:
                await self.sessions.ran(platform, conversation_id, session, reader.session_id, reader.usage,
                                        getattr(reader, "thread_usage", None))
        await self.records.finished(run_id, ending.status, ending.exit_code, changes.files if changes else [],
                                    changes.commits if changes else None, changes.diff if changes else "")


def final_answer(reader: Reader) -> str:
    """What an event-streaming agent did, in short, then its result text (never its raw events)."""
    parts = []
    if reader.did:
        parts.append("\n".join(f"• {entry}" for entry in reader.did))
    if reader.result:
        parts.append(reader.result.strip())
    return "\n\n".join(parts) + "\n" if parts else ""


def strip_mention(text: str, bot_mention: str) -> str:
    """The message as the agent reads it: without the bot's name (GitHub comments keep it)."""
    return re.sub(rf"(?<![\w@.-]){re.escape(bot_mention)}(?![\w-])[,:]?\s*", "", text).strip()


async def _taken(before: asyncio.Future[StagedTree]) -> WorkingTree | None:
    """The worktree as the run found it; None when it could not be read (or the run was stopped first)."""
    if not before.done():
        before.cancel()
    try:
        return await (await before).written()
    except (Exception, asyncio.CancelledError):  # noqa: BLE001 - the summary goes without it
        return None


async def changes_or_none(worktree: Path, before: WorkingTree | None, scratch: Path) -> Changes | None:
    """What the run changed (`before`'s objects lie in `scratch`); None when there is nothing to compare
    (it never started, the worktree went)."""
    if before is None or not worktree.is_dir():
        return None
    try:
        return await changes_since(worktree, before, scratch)
    except Exception as error:  # noqa: BLE001 - the summary goes without it
        activity.logger.warning("changes of %s not read: %s", worktree, error)
        return None
