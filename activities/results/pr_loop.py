"""The pull-request loop's activities (docs/pr-loop.md): which work of ours a PR event concerns, its CI
counts as recorded, what GitHub says failed or was asked, and the replies in review threads.

Every write is safe to repeat: a fix attempt is counted once per red head, a green head resets the
count once, a thread gets one reply per run (activities/results/pr_feedback.py)."""

from __future__ import annotations

import uuid

import asyncpg
from temporalio import activity
from temporalio.client import Client

from activities.chat.platforms.github_app.credentials import credentials_of
from activities.results import pr_feedback
from activities.results.pr_loop_start import start_loop
from activities.results.pull_requests import comment_once
from activities.results.records import PullRequestRecords
from isolator.contracts.pr_loop import (
    AskLoop,
    CiFailure,
    CiRecord,
    CiState,
    FeedbackEvent,
    LoopDecision,
    PullRequestNote,
    PullRequestWork,
    ReviewFeedback,
    RunEnd,
    ThreadRepliesInput,
)
from isolator.settings import Settings

# The PR's work: its open PR row and the active environment on its branch, with the PR's own conversation
# when it works there too. A PR conversation that has not pushed yet (no row) is found by its conversation instead.
_BY_PULL_REQUEST = """
SELECT c.id AS codebase_id, c.name AS codebase, e.id AS environment_id, e.branch_name, p.number, p.url,
       coalesce(p.opened_by, 'github:' || p.repository || '#' || p.number) AS conversation, p.fix_attempts,
       (SELECT 'github:' || v.platform_conversation_id FROM conversations v
        WHERE v.platform = 'github' AND lower(v.platform_conversation_id) = lower(p.repository || '#' || p.number)
          AND v.environment_id = e.id AND v.closed_at IS NULL LIMIT 1) AS pr_conversation
FROM pull_requests p
JOIN codebases c ON c.id = p.codebase_id
JOIN isolation_environments e ON e.codebase_id = p.codebase_id AND e.branch_name = p.branch_name AND e.status = 'active'
WHERE lower(p.repository) = lower($1) AND p.state = 'open'
  AND (p.number = $2 OR ($2::int IS NULL AND (p.remote_branch = $3 OR EXISTS (
      SELECT 1 FROM pushed_heads h
      WHERE h.codebase_id = p.codebase_id AND h.branch_name = p.branch_name AND h.sha = $4))))
LIMIT 1
"""
_BY_CONVERSATION = """
SELECT c.id AS codebase_id, c.name AS codebase, e.id AS environment_id, e.branch_name, $2::int AS number,
       '' AS url, 'github:' || v.platform_conversation_id AS conversation, 0 AS fix_attempts,
       NULL AS pr_conversation
FROM conversations v
JOIN isolation_environments e ON e.id = v.environment_id AND e.status = 'active'
JOIN codebases c ON c.id = e.codebase_id
WHERE v.platform = 'github' AND lower(v.platform_conversation_id) = lower($1 || '#' || $2::int) AND v.closed_at IS NULL
LIMIT 1
"""


class PullRequestLoopActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, client: Client | None = None) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client  # to start the loop for a command

    @activity.defn
    async def ask_pull_request_loop(self, ask: AskLoop) -> LoopDecision:
        """`/fix-ci` or `/update-branch`: the loop for the worktree's PR at its head now, and what it did."""
        recorded = await PullRequestRecords(self.pool).of_branch(ask.codebase_id, ask.branch)
        if recorded is None or recorded.state != "open":
            return LoopDecision("ignored", f"`{ask.branch}` has no open pull request (`/pr <title>` opens one)")
        assert self.client is not None
        head = await pr_feedback.pull_request_head(self.settings, recorded.repository, recorded.number)
        event = FeedbackEvent(kind=ask.kind, repository=recorded.repository, key=f"{ask.kind}:{ask.key}",
                              number=recorded.number, head_sha=head, head_branch=recorded.remote_branch,
                              asked_from=ask.asked_from)
        return await (await start_loop(self.settings, self.client, event)).result()

    @activity.defn
    async def find_pull_request_work(self, event: FeedbackEvent) -> PullRequestWork | None:
        """The work of ours the event is about; None when the PR is none of ours (or no longer open)."""
        row = await self.pool.fetchrow(_BY_PULL_REQUEST, event.repository, event.number, event.head_branch,
                                       event.head_sha)
        if row is None and event.number is not None:
            row = await self.pool.fetchrow(_BY_CONVERSATION, event.repository, event.number)
        if row is None:
            return None
        pushed = None
        if event.head_sha is not None:
            pushed = await self.pool.fetchrow("SELECT autofix FROM pushed_heads WHERE codebase_id = $1 AND sha = $2",
                                              row["codebase_id"], event.head_sha)
        return PullRequestWork(
            codebase_id=str(row["codebase_id"]), codebase=row["codebase"], environment_id=str(row["environment_id"]),
            branch=row["branch_name"], number=row["number"], url=row["url"], conversation=row["conversation"],
            pushed_by_service=pushed is not None or await self._pushed_as_the_app(event), attempts=row["fix_attempts"],
            autofix=pushed["autofix"] if pushed is not None else True,
            pr_conversation=_other(row["pr_conversation"], row["conversation"]),
        )

    async def _pushed_as_the_app(self, event: FeedbackEvent) -> bool:
        """As the GitHub App, a head its `<slug>[bot]` pushed is ours even when no row says so (the row of a
        push whose worker died before it was written); a personal token's pushes are a person's."""
        if event.pusher is None or not event.pusher.endswith("[bot]"):
            return False
        try:
            login = await credentials_of(self.settings).bot_login()
        except Exception as error:  # noqa: BLE001 - GitHub not reachable now: the row alone decides
            activity.logger.warning("the App's login is not known (%s): its pushes are known by their rows", error)
            return False
        return login is not None and login.lower() == event.pusher.lower()

    @activity.defn
    async def count_fix_attempt(self, record: CiRecord) -> int:
        """Count a fix run for a red head, once however often it is asked; the attempt's number."""
        return await self.pool.fetchval(
            """UPDATE pull_requests SET fix_attempts = fix_attempts + CASE WHEN fix_sha = $3 THEN 0 ELSE 1 END,
                   fix_sha = $3, ci_sha = CASE WHEN $4 THEN ci_sha ELSE $3 END,
                   ci_state = CASE WHEN $4 THEN ci_state ELSE 'red' END, updated_at = now()
               WHERE codebase_id = $1 AND branch_name = $2 RETURNING fix_attempts""",
            uuid.UUID(record.codebase_id), record.branch, record.sha, record.of_base)

    @activity.defn
    async def record_ci(self, record: CiRecord) -> int:
        """Record the head's CI state without a fix run (a person's push, or green): the count starts
        again from 0. Returns the count it had, so that a green head after fixes is said once."""
        return await self.pool.fetchval(
            """WITH before AS (SELECT fix_attempts FROM pull_requests WHERE codebase_id = $1 AND branch_name = $2
                               FOR UPDATE)
               UPDATE pull_requests p SET fix_attempts = 0, fixing_stopped = NULL, ci_sha = $3, ci_state = $4,
                                          updated_at = now()
               FROM before WHERE p.codebase_id = $1 AND p.branch_name = $2 RETURNING before.fix_attempts""",
            uuid.UUID(record.codebase_id), record.branch, record.sha, record.state) or 0

    @activity.defn
    async def stop_fixing(self, record: CiRecord) -> bool:
        """Fixing stops for this PR until a person's push or a green head; True the first time (to say it once)."""
        stopped = await self.pool.fetchval(
            """UPDATE pull_requests SET fixing_stopped = $4, ci_sha = $3, ci_state = 'red', updated_at = now()
               WHERE codebase_id = $1 AND branch_name = $2 AND fixing_stopped IS NULL RETURNING 1""",
            uuid.UUID(record.codebase_id), record.branch, record.sha, record.reason)
        return stopped is not None

    @activity.defn
    async def read_review_feedback(self, event: FeedbackEvent) -> ReviewFeedback:
        assert event.number is not None
        if event.review_id is not None:
            return await pr_feedback.read_review(self.settings, event.repository, event.number, event.review_id)
        assert event.comment_id is not None
        return await pr_feedback.read_review_comment(self.settings, event.repository, event.number, event.comment_id)

    @activity.defn
    async def read_ci_failure(self, event: FeedbackEvent) -> CiFailure:
        assert event.head_sha is not None
        return await pr_feedback.read_ci_failure(self.settings, event.repository, event.head_sha)

    @activity.defn
    async def read_ci_state(self, event: FeedbackEvent) -> CiState:
        assert event.head_sha is not None
        return await pr_feedback.ci_state(self.settings, event.repository, event.head_sha)

    @activity.defn
    async def open_pull_requests_on(self, event: FeedbackEvent) -> list[int]:
        """The open PRs of ours in the repository whose base is `event.head_branch`."""
        rows = await self.pool.fetch(
            """SELECT DISTINCT number FROM pull_requests WHERE lower(repository) = lower($1) AND base_branch = $2
               AND state = 'open' ORDER BY number""", event.repository, event.head_branch)
        return [row["number"] for row in rows]

    @activity.defn
    async def read_mergeable(self, event: FeedbackEvent) -> bool | None:
        assert event.number is not None
        return await pr_feedback.pull_request_mergeable(self.settings, event.repository, event.number)

    @activity.defn
    async def run_end(self, run_id: str) -> RunEnd | None:
        """The run's end as recorded (None while it is queued or running), and the head it pushed."""
        row = await self.pool.fetchrow(
            """SELECT r.status, r.output, h.sha FROM agent_runs r
               LEFT JOIN pushed_heads h ON h.run_id = r.id WHERE r.id = $1
               ORDER BY h.pushed_at DESC NULLS LAST LIMIT 1""", uuid.UUID(run_id))
        if row is None or row["status"] in ("queued", "running"):
            return None
        return RunEnd(row["status"], row["output"] or "", row["sha"])

    @activity.defn
    async def reply_in_threads(self, request: ThreadRepliesInput) -> int:
        return await pr_feedback.reply_in_threads(self.settings, request.repository, request.number,
                                                  request.replies, request.marker)

    @activity.defn
    async def mark_ready_when_green(self, work: PullRequestWork) -> bool:
        """RESULTS_READY_WHEN_GREEN: a draft PR the service opened, whose head is green after a run, is
        marked ready for review (a PR someone else opened is theirs to mark). True when marked now."""
        row = await self.pool.fetchrow(
            "SELECT origin, repository FROM pull_requests WHERE codebase_id = $1 AND branch_name = $2",
            uuid.UUID(work.codebase_id), work.branch)
        if row is None or row["origin"] != "opened":
            return False
        marked = await pr_feedback.mark_ready_for_review(self.settings, row["repository"], work.number)
        if marked:
            await self.pool.execute("UPDATE pull_requests SET draft = false, updated_at = now() "
                                    "WHERE codebase_id = $1 AND branch_name = $2",
                                    uuid.UUID(work.codebase_id), work.branch)
        return marked

    @activity.defn
    async def note_on_pull_request(self, note: PullRequestNote) -> None:
        """A line of the loop on the PR itself (fixing stopped), once (its marker)."""
        await comment_once(self.settings, note.repository, note.number, note.marker, note.text)


def _other(pr_conversation: str | None, conversation: str) -> str | None:
    """The PR's own conversation unless it is the work's (a PR a person opened): each is told once."""
    return None if pr_conversation is None or pr_conversation.lower() == conversation.lower() else pr_conversation
