"""The pull-request loop (docs/pr-loop.md): a review or a red CI on a PR the service works on becomes one
run of the agent in the PR's conversation, within AUTOFIX_MAX_ATTEMPTS; a green head after fixes is said.

One workflow per review and per red head (its id: isolator/contracts/pr_loop.py `workflow_key`), so
redeliveries, and a check suite and a workflow run reporting the same head, start one run."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.agent import QueueRunInput
    from isolator.contracts.message import ReplyInput
    from isolator.contracts.pr_loop import (
        CiFailure,
        CiRecord,
        CiState,
        FeedbackEvent,
        LoopDecision,
        PullRequestLoopInput,
        PullRequestNote,
        PullRequestWork,
        RunEnd,
        ThreadRepliesInput,
        ThreadReply,
        workflow_key,
    )
    from isolator.pr_feedback_texts import ci_failure_message, review_message, thread_replies
    from workflows.chat import pr_loop_texts as texts
    from workflows.steps.chat import replies
    from workflows.steps.results import pr_loop
    from workflows.steps.runs import queue as agent_runs

# How often a review's loop looks whether its run has ended, at most (the wait costs no process).
_LONGEST_LOOK = timedelta(seconds=30)
# From this version a green head after fixes is said in the PR's own conversation too, when it works there.
PASSED_IN_PR_CONVERSATION = "ci-passed-said-in-the-prs-conversation"
# From this version `/fix-ci` reads the head's state and its failure at once.
READS_CI_AT_ONCE = "fix-ci-reads-ci-at-once"


@workflow.defn
class PullRequestLoopWorkflow:
    @workflow.run
    async def run(self, loop: PullRequestLoopInput) -> LoopDecision:
        event = loop.event
        if event.conclusion == "base_moved":
            return await self._base_moved(loop)
        work = await pr_loop.find_pull_request_work(event)
        if work is None:
            return LoopDecision("ignored", "no work of this service's on this pull request")
        if event.kind == "review":
            return await self._review(event, work)
        if event.kind == "update_branch":
            return await self._update_branch(loop, work)
        if event.kind == "fix_ci":
            return await self._fix_by_hand(loop, work)
        if event.conclusion == "success":
            return await self._green(loop, work)
        return await self._red(loop, work)

    async def _red(self, loop: PullRequestLoopInput, work: PullRequestWork) -> LoopDecision:
        """A red head: fixed by the agent when the service pushed it, within the caps."""
        event = loop.event
        assert event.head_sha is not None
        record = CiRecord(work.codebase_id, work.branch, event.head_sha)
        if not loop.autofix or not work.autofix:
            return LoopDecision("ignored", "CI runs are off (AUTOFIX=off or `[results] autofix = false`)")
        if not work.pushed_by_service:
            await pr_loop.record_ci(record)  # a person's push: the count starts again
            await self._tell(work, texts.someone_elses_head(event.head_sha), "someone-elses-head")
            return LoopDecision("ignored", "a head the service did not push")
        if work.attempts >= loop.max_attempts:
            stopped = texts.fixing_stopped(event.head_sha, loop.max_attempts)
            if await pr_loop.stop_fixing(replace(record, reason=stopped)):
                await self._tell(work, stopped, "stopped")
                await pr_loop.note_on_pull_request(PullRequestNote(
                    event.repository, work.number, stopped, f"<!-- isolator-fixing-stopped: {event.head_sha} -->"))
            return LoopDecision("stopped", stopped)
        failure = await pr_loop.read_ci_failure(event)
        attempt = await pr_loop.count_fix_attempt(record)
        said = texts.fixing(event.head_sha, [check.name for check in failure.checks], attempt, loop.max_attempts)
        return await self._hand_to_agent(work, ci_failure_message(failure, attempt, loop.max_attempts), said)

    async def _fix_by_hand(self, loop: PullRequestLoopInput, work: PullRequestWork) -> LoopDecision:
        """`/fix-ci`: the PR's head now, red, goes to the agent whoever pushed it and whatever the count."""
        event = loop.event
        assert event.head_sha is not None
        failure = await self._failure_if_red(event)
        if not isinstance(failure, CiFailure):
            return LoopDecision("ignored", texts.not_red(event.head_sha, failure))
        attempt = await pr_loop.count_fix_attempt(CiRecord(work.codebase_id, work.branch, event.head_sha))
        most = max(attempt, loop.max_attempts)
        said = texts.fixing(event.head_sha, [check.name for check in failure.checks], attempt, most)
        return await self._hand_to_agent(work, ci_failure_message(failure, attempt, most), said)

    async def _failure_if_red(self, event: FeedbackEvent) -> CiFailure | CiState:
        """What failed on the head when it is red, else its state. Both are read at once: a person waits
        for the run (runs before READS_CI_AT_ONCE read the failure once the state said red)."""
        if workflow.patched(READS_CI_AT_ONCE):
            state, failure = await asyncio.gather(pr_loop.read_ci_state(event), pr_loop.read_ci_failure(event))
            return failure if state == "red" else state
        state = await pr_loop.read_ci_state(event)
        return await pr_loop.read_ci_failure(event) if state == "red" else state

    async def _base_moved(self, loop: PullRequestLoopInput) -> LoopDecision:
        """A push to the default branch: each PR of ours on it is looked at, in a loop of its own."""
        event = loop.event
        assert event.head_branch is not None and event.head_sha is not None
        for number in await pr_loop.open_pull_requests_on(event):
            each = replace(event, number=number, key=f"{event.key}:{number}", conclusion="check_mergeable")
            await workflow.start_child_workflow(
                PullRequestLoopWorkflow.run, replace(loop, event=each), id=workflow_key(each),
                parent_close_policy=ParentClosePolicy.ABANDON,
                static_summary=f"does {event.repository}#{number} still merge into {event.head_branch}?")
        return LoopDecision("ignored", "each pull request is looked at on its own")

    async def _update_branch(self, loop: PullRequestLoopInput, work: PullRequestWork) -> LoopDecision:
        """The PR's base, merged into its branch before a run that resolves what conflicts (never a force push):
        asked with `/update-branch`, or when the base moved and GitHub says the PR no longer merges."""
        event = loop.event
        if event.conclusion == "check_mergeable":
            if await self._mergeable(event) is not False:
                return LoopDecision("ignored", "the pull request still merges (or GitHub could not tell)")
            if not loop.autofix:
                return LoopDecision("ignored", "runs the service starts by itself are off (AUTOFIX=off)")
            assert event.head_sha is not None
            record = CiRecord(work.codebase_id, work.branch, event.head_sha, of_base=True)
            if work.attempts >= loop.max_attempts:
                return LoopDecision("stopped", "AUTOFIX_MAX_ATTEMPTS runs in a row left the pull request unmergeable")
            await pr_loop.count_fix_attempt(record)
        return await self._hand_to_agent(work, texts.UPDATE_BRANCH_MESSAGE, texts.updating(), merge_base=True)

    async def _green(self, loop: PullRequestLoopInput, work: PullRequestWork) -> LoopDecision:
        """A head whose checks all passed: the count starts again, a head the agent fixed is said, and with
        RESULTS_READY_WHEN_GREEN a draft the service opened is marked ready for review."""
        event = loop.event
        assert event.head_sha is not None
        if await pr_loop.read_ci_state(event) != "green":
            return LoopDecision("ignored", "not every check of the head has passed yet")
        fixes = await pr_loop.record_ci(CiRecord(work.codebase_id, work.branch, event.head_sha, state="green"))
        if fixes and work.pushed_by_service:
            await self._tell(work, texts.passed(event.head_sha, fixes), "passed")
            if work.pr_conversation is not None and workflow.patched(PASSED_IN_PR_CONVERSATION):
                await self._tell(work, texts.passed(event.head_sha, fixes), "passed-on-pr", work.pr_conversation)
        if loop.ready_when_green and work.pushed_by_service and await pr_loop.mark_ready_when_green(work):
            await self._tell(work, texts.marked_ready(work.number), "ready")
        return LoopDecision("passed")

    async def _review(self, event: FeedbackEvent, work: PullRequestWork) -> LoopDecision:
        """A review: one run with its body and every inline comment; then a reply in each comment's thread."""
        feedback = await pr_loop.read_review_feedback(event)
        if not feedback.body.strip() and not feedback.comments:
            return LoopDecision("ignored", "a review with nothing written")
        decision = await self._hand_to_agent(work, review_message(feedback),
                                             texts.reviewed(feedback.author, feedback.state, len(feedback.comments)))
        if decision.run_id is None or not feedback.comments:
            return decision
        end = await self._run_end(decision.run_id)
        said = (thread_replies(end.answer, feedback, end.pushed) if end.status == "done" else
                [ThreadReply(comment.id, f"Not changed: the agent's run ended {end.status.replace('_', ' ')}.")
                 for comment in feedback.comments])
        await pr_loop.reply_in_threads(ThreadRepliesInput(event.repository, feedback.number, said,
                                                          f"<!-- isolator-run: {decision.run_id} -->"))
        return decision

    async def _hand_to_agent(self, work: PullRequestWork, text: str, said: str,
                             merge_base: bool = False) -> LoopDecision:
        """The run queued, then `said` in the conversation: the agent need not wait for the line."""
        platform, conversation_id = work.conversation.split(":", 1)
        queued = await agent_runs.queue_agent_run(QueueRunInput(
            work.environment_id, work.codebase_id, platform, conversation_id, text, workflow.info().workflow_id,
            answered=True, merge_base=merge_base,
        ))
        if queued.outcome != "queued":
            return LoopDecision("ignored", "no agent answers here" if queued.outcome == "no_agent"
                                else "the worktree is being removed")
        await self._tell(work, said, "said")
        return LoopDecision("run", run_id=queued.run_id)

    async def _mergeable(self, event: FeedbackEvent) -> bool | None:
        """GitHub works mergeability out lazily after a push: asked a few times, a while apart."""
        wait = timedelta(seconds=2)
        for _ in range(6):
            if (mergeable := await pr_loop.read_mergeable(event)) is not None:
                return mergeable
            await workflow.sleep(wait)
            wait *= 2
        return None

    async def _run_end(self, run_id: str) -> RunEnd:
        wait = timedelta(seconds=1)
        while (end := await pr_loop.run_end(run_id)) is None:
            await workflow.sleep(wait)
            wait = min(wait * 2, _LONGEST_LOOK)
        return end

    async def _tell(self, work: PullRequestWork, text: str, what: str, conversation: str | None = None) -> None:
        """`text` in the work's conversation, or in `conversation`."""
        platform, conversation_id = (conversation or work.conversation).split(":", 1)
        await replies.send_reply(ReplyInput(platform, conversation_id, text, f"{workflow.info().workflow_id}:{what}"))
