"""Results: what a run that ended `done` leaves is delivered by the service, never by the agent.

Two steps, so that a worker killed between them is retried without a second pull request:
`push_results`, on the codebase's host, commits what the agent left (author the agent, committer
the service; `.gitignore` respected, no hooks) and pushes the environment's own branch to origin
(never forced, never the default branch); `publish_results`, anywhere, opens the draft PR once (or
finds the one already open from that branch), comments on it for later runs, records it and adds
its link to the run's last message. Each step is safe to repeat.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.github_app.credentials import credentials_of, git_token
from activities.chat.replies import ReplyActivities
from activities.git.runner import run_git
from activities.providers.worktree.base import committed_config, fresh_base
from activities.providers.worktree.include import _patterns as included_patterns
from activities.results import pull_requests
from activities.runs.answer import DEFAULT_PLATFORM_LIMIT, PLATFORM_LIMITS
from activities.runs.run_agent import strip_mention
from isolator.repositories import repository_key
from activities.results.commit_and_push import (
    commit_everything,
    commit_message,
    commits_beyond,
    commits_not_on_origin,
    current_branch,
    has_uncommitted,
    push_branch,
    push_url,
    unresolved_conflicts,
)
from activities.results.records import PullRequestRecords
from isolator import tracing
from isolator.contracts.codebase import repository_full_name
from isolator.contracts.message import ReplyInput
from isolator.contracts.results import (
    Delivery,
    PublishRequest,
    PullRequestStatus,
    PullRequestStatusRequest,
    PushReport,
    PushRequest,
)
from isolator.repository_config import read_setup
from isolator.results_rules import (
    agent_author,
    commits_text,
    first_line,
    kind_of,
    parse_identity,
    pr_label,
    push_refusal,
    remote_branch,
    where_the_work_is,
)
from isolator.settings import Settings

ANSWER_IN_BODY = 3000  # characters of the agent's answer quoted in a PR's body or comment


class ResultsActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, replies: ReplyActivities) -> None:
        self.settings = settings
        self.records = PullRequestRecords(pool)
        self.replies = replies

    @activity.defn
    async def push_results(self, request: PushRequest) -> PushReport:
        environment = request.environment
        codebase = environment.codebase
        kind = kind_of(environment)
        recorded = await self.records.of_branch(codebase.id, environment.branch)
        if self.settings.results == "off" or (kind == "chat" and recorded is None and request.title is None):
            return PushReport("off")
        worktree, repository = Path(environment.working_path), Path(codebase.canonical_path)
        if not worktree.is_dir():
            return PushReport("nothing")
        base = await fresh_base(self.settings.worktree_base, repository, codebase.default_branch,
                                self.settings.fetch_interval_seconds)
        setup = read_setup(await committed_config(repository, base))
        if setup.problem is not None:
            return PushReport("kept", where_the_work_is(environment, f"as {setup.problem.describe()}"))
        config = setup.config.results
        excludes = included_patterns(repository, setup.config.include)
        dirty = await has_uncommitted(worktree, excludes)
        new = await commits_not_on_origin(worktree, environment.branch, base.revision)
        # A branch whose PR is still to be opened (a retry after the push went through) is new work too.
        wants_pr = request.title is not None or (kind == "issue" and recorded is None)
        ahead = await commits_beyond(worktree, environment.branch, base.revision) if wants_pr else 0
        if not dirty and new == 0 and ahead == 0:
            return PushReport("nothing")
        if await push_url(worktree) is None:
            return PushReport("kept", where_the_work_is(environment, "as the checkout has no `origin`"))
        github = _github_repository(codebase.repository_url)
        if github is None:
            return PushReport("kept", where_the_work_is(environment, "as origin is not a GitHub repository"))
        checked_out = await current_branch(worktree)
        if conflicts := await unresolved_conflicts(worktree):
            return PushReport("kept", where_the_work_is(environment, "as a merge in it is unfinished (conflicts left "
                                                                     f"in {', '.join(conflicts[:5])})"))
        committed = False
        if dirty and config.commit and checked_out == environment.branch:
            message = commit_message(strip_mention(request.message, self.settings.bot_mention),
                                     request.conversation, request.run_id)
            committed = await commit_everything(worktree, message, agent_author(request.plan),
                                                parse_identity(self.settings.results_committer), excludes) is not None
            if not committed and new == 0 and ahead == 0:
                return PushReport("nothing")  # all that changed is left out (a nested repository with no commit)
            new = await commits_not_on_origin(worktree, environment.branch, base.revision)
        elif dirty and new == 0 and ahead == 0:
            return PushReport("kept", where_the_work_is(environment, "as `[results] commit = false` leaves the "
                                                                     "agent's changes uncommitted"))
        credentials = credentials_of(self.settings)
        why_kept = self._why_kept(kind, config.push, config.pull_request, recorded is not None,
                                  await credentials.configured())
        if why_kept is not None:
            return PushReport("kept", where_the_work_is(environment, why_kept), committed=committed)
        remote = remote_branch(environment, recorded, config.branch_prefix)
        refusal = push_refusal(environment, remote, codebase.default_branch, checked_out, recorded,
                               config.branch_prefix)
        if refusal is not None:
            return PushReport("refused", where_the_work_is(environment, f"as {refusal}"), committed=committed)
        # The installation's token of this repository as the App, else GITHUB_TOKEN: given to this push alone.
        with tracing.span("git push", branch=remote):
            pushed = await push_branch(worktree, environment.branch, remote, await git_token(self.settings, github))
        if not pushed.ok:
            return PushReport("rejected", _rejected(environment.branch, remote, pushed.reason), committed=committed)
        tip = await current_tip(worktree, environment.branch)
        if tip is not None:  # CI on this head is the agent's to fix (docs/pr-loop.md)
            await self.records.pushed_head(codebase.id, environment.branch, tip, request.run_id, config.autofix)
        return PushReport(
            "up_to_date" if pushed.up_to_date else "pushed", repository=github, default_branch=codebase.default_branch,
            remote_branch=remote, commit=tip, new_commits=new, committed=committed, mode=config.pull_request,
            existing=recorded, follows_pr=int(environment.workflow_id) if kind == "pull_request" else None,
        )

    def _why_kept(self, kind: str, push: bool, mode: str, has_pr: bool, has_credentials: bool) -> str | None:
        if kind == "fork":
            return "as this pull request comes from a fork, and the service never pushes to one"
        if kind == "review":
            return "as a review's worktree is never pushed"
        if not has_credentials:
            return "as the service has no GitHub credentials (a GitHub App or GITHUB_TOKEN)"
        if not push:
            return "as `.isolator.toml` says `[results] push = false`"
        if mode == "off" and kind != "pull_request" and not has_pr:
            return 'as `.isolator.toml` says `[results] pull_request = "off"`'
        return None

    @activity.defn
    async def publish_results(self, publish: PublishRequest) -> Delivery:
        request, push = publish.request, publish.push
        if push.outcome in ("off", "nothing"):
            return Delivery(push.outcome)
        if push.outcome in ("kept", "rejected", "refused"):
            await self._tell(request, push.text)
            return Delivery(push.outcome, push.text)
        try:
            with tracing.span("pull request", repository=push.repository, branch=push.remote_branch):
                delivery = await self._pull_request(request, push)
        except ApplicationError as error:
            if not error.non_retryable:
                raise
            delivery = Delivery("failed", f"`{push.remote_branch}` was pushed to origin, but {error.message}.")
        await self._tell(request, delivery.text)
        return delivery

    async def _pull_request(self, request: PushRequest, push: PushReport) -> Delivery:
        environment = request.environment
        assert push.repository is not None
        pushed = push.new_commits + (0 if push.new_commits or not push.committed else 1)
        if push.follows_pr is not None:  # a same-repository PR's conversation: its own PR, nothing opened
            pull = push.existing or await pull_requests.followed_pull_request(
                self.settings, push.repository, push.follows_pr, push.remote_branch)
            await self.records.record(environment.codebase.id, environment.branch, pull, None)
            return Delivery("pushed", f"Pushed {commits_text(pushed)} to `{push.remote_branch}`: {pr_label(pull)}",
                            pull)
        if push.existing is not None:
            pull = push.existing
            if request.run_id is not None and pushed:
                await pull_requests.comment_once(self.settings, pull.repository, pull.number,
                                                f"<!-- isolator-run: {request.run_id} -->", await self._comment(request, push))
            return Delivery("updated", f"{pr_label(pull)} (pushed {commits_text(pushed)})", pull)
        summary = await self._summary(request)
        if kind_of(environment) == "issue":
            number = int(environment.workflow_id)
            title = request.title or await pull_requests.issue_title(self.settings, push.repository, number)
            body = f"Closes #{number}\n\n{summary}"
        else:
            title, body = request.title or first_line(request.message), summary
        pull = await pull_requests.open_pull_request(self.settings, pull_requests.NewPullRequest(
            push.repository, push.remote_branch, push.default_branch, title, body, draft=push.mode != "ready"))
        await self.records.record(environment.codebase.id, environment.branch, pull, request.conversation)
        return Delivery("opened", pr_label(pull), pull)

    async def _summary(self, request: PushRequest) -> str:
        origin = f"From `{request.conversation}`"
        if request.run_id is None:
            return f"{origin}, opened with `/pr`."
        return f"{origin}, run `{request.run_id}`: “{first_line(request.message)}”.\n\n{await self._answer(request)}"

    async def _comment(self, request: PushRequest, push: PushReport) -> str:
        commit = (push.commit or "")[:7]
        return (f"Pushed `{commit}` to `{push.remote_branch}` from run `{request.run_id}` of `{request.conversation}`: "
                f"“{first_line(request.message)}”.\n\n{await self._answer(request)}")

    async def _answer(self, request: PushRequest) -> str:
        answer = (await self.records.answer_of_run(request.run_id or "")).strip() if request.run_id else ""
        if not answer:
            return ""
        if len(answer) > ANSWER_IN_BODY:
            answer = "…" + answer[-ANSWER_IN_BODY:]
        return f"<details><summary>The agent's answer</summary>\n\n{answer}\n\n</details>"

    async def _tell(self, request: PushRequest, text: str) -> None:
        """The line goes at the end of the run's last message (edited in place), or in a message of its
        own when that one has no room; a `/pr` answers it itself."""
        if not text or request.run_id is None:
            return
        platform, conversation_id = request.conversation.split(":", 1)
        last = await self.records.last_message_of_run(request.run_id)
        if last is not None:
            key, body = last
            if text in body:  # told already, by an attempt that did not live to return
                return
            combined = f"{body.rstrip()}\n{text}"
            if len(combined) <= PLATFORM_LIMITS.get(platform, DEFAULT_PLATFORM_LIMIT):
                await self.replies.deliver_once(ReplyInput(platform, conversation_id, combined, f"{key}:results",
                                                           updates=key))
                return
        await self.replies.deliver_once(ReplyInput(platform, conversation_id, text,
                                                   f"agent-run:{request.run_id}:results"))

    @activity.defn
    async def pull_request_status(self, request: PullRequestStatusRequest) -> PullRequestStatus:
        """For `/status`: the branch's PR, its state and its checks, as GitHub says now; as last
        recorded when GitHub cannot be asked."""
        recorded = await self.records.of_branch(request.codebase.id, request.branch)
        if recorded is None:
            return PullRequestStatus()
        try:
            pull, checks = await pull_requests.pull_request_state(self.settings, recorded)
        except Exception as error:  # noqa: BLE001 - /status answers with what is known
            activity.logger.warning("PR #%s not read: %s", recorded.number, error)
            return PullRequestStatus(recorded, recorded.checks, fresh=False)
        pull.checks = checks
        await self.records.record(request.codebase.id, request.branch, pull, None)
        return PullRequestStatus(pull, checks, ci_loop=ci_loop_line(
            await self.records.ci_loop(request.codebase.id, request.branch),
            self.settings.autofix_max_attempts if self.settings.autofix == "on" else 0))


async def current_tip(worktree: Path, branch: str) -> str | None:
    result = await run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=worktree, check=False)
    return result.stdout.strip() or None


def _github_repository(url: str | None) -> str | None:
    """`owner/name` when the codebase's recorded repository URL is on GitHub."""
    if not url or not repository_key(url).lower().startswith("github.com/"):
        return None
    return repository_full_name(url)


def _rejected(branch: str, remote: str, reason: str) -> str:
    return (f"The push of `{branch}` to origin's `{remote}` was refused, and nothing was forced:\n```\n{reason}\n```\n"
            f"The work stays on the server's branch `{branch}`; the next run pushes again (ask the agent to merge "
            f"`origin/{remote}` first when origin moved on).")


def ci_loop_line(counts: asyncpg.Record | None, cap: int) -> str | None:
    """`/status`'s line of the pull-request loop; None before CI has said anything of a head of ours."""
    if counts is None or (counts["ci_state"] is None and not counts["fix_attempts"]):
        return None
    if cap == 0:
        return "CI fixes: off (AUTOFIX=off)"
    head = f" on `{counts['ci_sha'][:7]}`" if counts["ci_sha"] else ""
    if counts["fixing_stopped"]:
        return f"CI fixes: stopped after {counts['fix_attempts']} of {cap}; `/fix-ci` asks for one more"
    return f"CI: {counts['ci_state'] or 'not known'}{head}, {counts['fix_attempts']} of {cap} fix runs made"
