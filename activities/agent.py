"""One run of the coding agent in its worktree, on the codebase's host (its `/agents` queue, which
takes AGENT_MAX_CONCURRENT at once).

The message goes to the agent's standard input; its standard output is the answer, streamed to the
conversation (activities/agent_answer.py) and kept with the run; standard error is the run's log.
The run ends done, failed, timed out or stopped (the activity cancelled: `/stop`, a forced removal),
and its last message says so, with what changed in the worktree meanwhile.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from temporalio import activity

from activities.agent_answer import AnswerStream
from activities.replies import ReplyActivities
from activities.run_processes import RunProcesses
from activities.run_records import FLUSH_SECONDS, Capture, RunRecords
from activities.setup import command_variables
from activities.user_commands import CannotStart, Finished, run_user_program, user_environment
from activities.working_trees import Changes, WorkingTree, changes_since, working_tree
from isolator.contracts.agent import AgentRunReport, RunStatus
from isolator.contracts.environment import AgentRunInput
from isolator.settings import Settings

LOG_TAIL_LINES = 10
LOG_TAIL_CHARS = 300  # of each line shown on failure


class AgentActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, replies: ReplyActivities,
                 processes: RunProcesses) -> None:
        self.settings = settings
        self.records = RunRecords(pool)
        self.replies = replies
        self.processes = processes

    @activity.defn
    async def run_agent(self, request: AgentRunInput) -> AgentRunReport:
        run, environment = request.run, request.environment
        platform, conversation_id = run.conversation.split(":", 1)
        worktree = Path(environment.working_path)
        answer = AnswerStream(self.replies.deliver_once, platform, conversation_id, run.run_id)
        output = Capture(self.records, run.run_id, "output")
        errors = _Log(Capture(self.records, run.run_id, "log"))
        started = time.monotonic()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        async def on_output(chunk: bytes) -> None:
            text = decoder.decode(chunk)
            answer.add(text)
            await output.add(text)

        variables = {
            **command_variables(environment, request.ports),
            "ISOLATOR_MESSAGE": run.text, "ISOLATOR_PLATFORM": platform, "ISOLATOR_CONVERSATION": conversation_id,
            "ISOLATOR_RUN_ID": run.run_id,
        }
        posting = asyncio.create_task(answer.keep_posting())
        ticking = asyncio.create_task(_keep_flushing(output, errors.capture))
        ending = Ending(started)
        before: WorkingTree | None = None
        try:
            _, before = await asyncio.gather(self.records.started(run.run_id), working_tree(worktree))
            finished = await run_user_program(
                run.plan.argv, worktree, user_environment(variables), run.plan.timeout_minutes * 60.0,
                on_output=on_output, on_error=errors.add, stdin=strip_mention(run.text, self.settings.bot_mention).encode(),
                on_start=lambda group: self.processes.record(run.run_id, group),
            )
            ending.finished(finished)
        except CannotStart as error:
            ending.cannot_start(f"{error}; check {run.plan.source}")
        except asyncio.CancelledError:
            ending.stopped()
            raise
        finally:
            self.processes.forget(run.run_id)
            await _stop(posting, ticking)
            changes = await changes_or_none(worktree, before)
            answer.add(decoder.decode(b"", final=True))
            await output.flush()
            await errors.capture.flush()
            await answer.finish(self._with_page_link(ending.summary(changes, errors.last_lines()), run.run_id),
                                f"The rest of the answer is in the run's record: `GET /api/runs/{run.run_id}`.")
            await self.records.finished(run.run_id, ending.status, ending.exit_code,
                                        changes.files if changes else [], changes.commits if changes else None)
        return AgentRunReport(run.run_id, ending.status, ending.exit_code, time.monotonic() - started)

    def _with_page_link(self, summary: str, run_id: str) -> str:
        """The run's dashboard page after the summary's headline (a long log tail may be cut, not it),
        when PUBLIC_URL says where users reach this server."""
        if not self.settings.public_url:
            return summary
        headline, _, rest = summary.partition("\n")
        link = f"The run, live and in full: {self.settings.public_url.rstrip('/')}/runs/{run_id}"
        return "\n".join(part for part in (headline, link, rest) if part)


def strip_mention(text: str, bot_mention: str) -> str:
    """The message as the agent reads it: without the bot's name (GitHub comments keep it)."""
    return re.sub(rf"(?<![\w@.-]){re.escape(bot_mention)}(?![\w-])[,:]?\s*", "", text).strip()


class _Log:
    """Standard error: kept with the run, its last lines shown when the run fails."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self.partial = ""

    async def add(self, chunk: bytes) -> None:
        text = self.decoder.decode(chunk)
        *lines, self.partial = (self.partial + text).split("\n")
        self.partial = self.partial[-LOG_TAIL_CHARS:]
        self.tail.extend(line[:LOG_TAIL_CHARS] for line in lines)
        await self.capture.add(text)

    def last_lines(self) -> list[str]:
        return [*self.tail, self.partial] if self.partial else list(self.tail)


@dataclass
class Ending:
    """How a run ended, and the closing line that says so."""

    started: float
    status: RunStatus = "interrupted"
    exit_code: int | None = None
    problem: str | None = None

    def finished(self, finished: Finished) -> None:
        self.exit_code = finished.exit_code
        self.status = "timed_out" if finished.timed_out else "done" if finished.exit_code == 0 else "failed"

    def cannot_start(self, problem: str) -> None:
        self.status, self.problem = "failed", problem

    def stopped(self) -> None:
        self.status = "stopped"

    def summary(self, changes: Changes | None, log_tail: list[str]) -> str:
        took = _duration(time.monotonic() - self.started)
        headline = {
            "done": f"Done in {took}.",
            "failed": f"Failed with exit code {self.exit_code} after {took}." if self.exit_code is not None
                      else f"Failed after {took}.",
            "timed_out": f"Timed out after {took} (the limit is AGENT_TIMEOUT_MINUTES) and was stopped.",
            "stopped": f"Stopped after {took}.",
            "interrupted": f"Interrupted after {took}.",
        }[self.status]
        if self.problem is not None:
            headline = f"The agent could not start: {self.problem}."
        lines = [f"— {headline} {changes_text(changes)}"]
        shown = [line for line in log_tail if line.strip()] if self.status in ("failed", "timed_out") else []
        if shown and self.problem is None:
            lines.append("Its last lines of standard error:\n```\n" + "\n".join(shown) + "\n```")
        return "\n".join(lines)


def changes_text(changes: Changes | None) -> str:
    if changes is None:
        return ""
    if not changes.files and not changes.commits:
        return "Nothing changed in the worktree."
    files = len(changes.files)
    names = ", ".join(f"`{name}`" for name in changes.files[:5]) + (f" and {files - 5} more" if files > 5 else "")
    parts = [f"{files} file{'s' if files != 1 else ''} changed ({names})" if files else "no file changed"]
    if changes.commits:
        parts.append(f"{changes.commits} commit{'s' if changes.commits != 1 else ''} made")
    return "; ".join(parts) + "."


def _duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"


async def changes_or_none(worktree: Path, before: WorkingTree | None) -> Changes | None:
    """What the run changed; None when there is nothing to compare (it never started, the worktree went)."""
    if before is None or not worktree.is_dir():
        return None
    try:
        return await changes_since(worktree, before)
    except Exception as error:  # noqa: BLE001 - the summary goes without it
        activity.logger.warning("changes of %s not read: %s", worktree, error)
        return None


async def _keep_flushing(*captures: Capture) -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        for capture in captures:
            await capture.flush()


async def _stop(*tasks: asyncio.Task) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
