"""The record and the messages of a run of a team's own agent workflow (AGENT_WORKFLOW): the
worktree as the run found it, and at its end the answer, how it ended and what changed."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import asyncpg
from temporalio import activity

from activities.chat.replies import ReplyActivities
from activities.git.working_trees import WorkingTree, snapshot_folder, working_tree
from activities.runs.answer import AnswerStream
from activities.runs.records import Capture, RunRecords
from activities.runs.run_agent import Ending, changes_or_none
from isolator.contracts.agent import AgentRunReport, RunStart, TeamRunEnd
from isolator.contracts.environment import AgentRunInput


class TeamAgentRunActivities:
    def __init__(self, pool: asyncpg.Pool, replies: ReplyActivities) -> None:
        self.records = RunRecords(pool)
        self.replies = replies

    @activity.defn
    async def begin_team_run(self, request: AgentRunInput) -> RunStart:
        await self.records.started(request.run.run_id)
        worktree = Path(request.environment.working_path)
        state = await working_tree(worktree, snapshot_folder(worktree, request.run.run_id))
        return RunStart(state.head, state.tree)

    @activity.defn
    async def end_team_run(self, request: AgentRunInput, end: TeamRunEnd) -> AgentRunReport:
        run = request.run
        platform, conversation_id = run.conversation.split(":", 1)
        before = WorkingTree(end.start.head, end.start.tree) if end.start else None
        worktree = Path(request.environment.working_path)
        try:
            snapshots = snapshot_folder(worktree, run.run_id)
            changes = await changes_or_none(worktree, before, snapshots)
            shutil.rmtree(snapshots, ignore_errors=True)
        except OSError:  # the worktree went: nothing to compare
            changes = None
        output = Capture(self.records, run.run_id, "output")
        await output.add(end.answer)
        await output.flush()
        ending = Ending(time.monotonic() - end.seconds, end.status)
        answer = AnswerStream(self.replies.deliver_once, platform, conversation_id, run.run_id)
        answer.add(end.answer)
        await answer.finish(ending.summary(changes, []),
                            f"The rest of the answer is in the run's record: `GET /api/runs/{run.run_id}`.")
        await self.records.finished(run.run_id, end.status, None, changes.files if changes else [],
                                    changes.commits if changes else None, changes.diff if changes else "")
        return AgentRunReport(run.run_id, end.status, None, end.seconds)
