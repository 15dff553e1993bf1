"""The repository's set-up and teardown, run in an environment's worktree on the codebase's host.

Set-up: submodules (when `.gitmodules` exists and `worktree.submodules` allows), then each command
of `[setup]` through `sh -c`, in order and in one sandbox (activities/sandbox/command_lists.py), as
the repository's own scripts run in CI. A set-up that
runs longer than 5 s shows its progress in the conversation as one message updated in place, and
ends with "Ready in …" or with the failed command and the last lines of its output. Teardown runs
`[teardown]` before a removal; a failure is reported and does not keep the worktree.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from temporalio import activity

from activities.chat.replies import ReplyActivities
from activities.providers.worktree.base import default_branch_setup, fresh_base
from activities.sandbox.command_lists import run_user_commands
from activities.sandbox.user_programs import SUBMODULES, user_environment
from isolator.contracts.environment import EnvironmentRef, PortBlock
from isolator.contracts.message import ReplyInput
from isolator.contracts.repository import RepositorySetup
from isolator.contracts.setup import CommandsReport, CommandsRequest, ReadSetupInput
from isolator.settings import Settings

SHOW_PROGRESS_AFTER_SECONDS = 5.0
PROGRESS_EVERY_SECONDS = 3.0


class SetupActivities:
    def __init__(self, settings: Settings, replies: ReplyActivities) -> None:
        self.settings = settings
        self.replies = replies

    @activity.defn
    async def read_repository_setup(self, request: ReadSetupInput) -> RepositorySetup:
        """`.isolator.toml` as committed on origin's default branch (fetched at most once per interval)."""
        repository = Path(request.codebase.canonical_path)
        base = await fresh_base(self.settings.worktree_base, repository, request.codebase.default_branch,
                                self.settings.fetch_interval_seconds)
        return await default_branch_setup(repository, base, request.codebase.default_branch)

    @activity.defn
    async def run_commands(self, request: CommandsRequest) -> CommandsReport:
        """Set-up (or, with `teardown`, the teardown) commands in the worktree, one after another."""
        config = request.setup.config
        worktree = Path(request.environment.working_path)
        commands = list(config.teardown_commands if request.teardown else config.setup_commands)
        if not request.teardown and config.submodules and (worktree / ".gitmodules").is_file():
            commands.insert(0, SUBMODULES)
        if not commands:
            return CommandsReport("done")
        if not worktree.is_dir():  # gone already (removed behind our back): nothing to run them in
            return CommandsReport("skipped")
        limit = 60.0 * (config.teardown_timeout_minutes if request.teardown else config.setup_timeout_minutes)
        progress = _Progress(self, request, commands)
        started = time.monotonic()
        variables = user_environment(command_variables(request.environment, request.ports))
        async with progress.shown():
            progress.now(1, commands[0])
            finished = await run_user_commands(commands, worktree, variables, limit,
                                               on_command=lambda index: progress.now(index + 1, commands[index]))
        if finished.failed is None:  # a success's output: the last command's last lines, for `/status`
            report = CommandsReport("done", tail=finished.tail)
        else:
            report = CommandsReport("failed", 0.0, commands[finished.failed], finished.exit_code, finished.tail,
                                    finished.limit)
        report.seconds = time.monotonic() - started
        await progress.end(report)
        return report

    async def tell(self, conversation: str, key: str, text: str, updates: str | None = None) -> None:
        platform, conversation_id = conversation.split(":", 1)
        await self.replies.deliver_once(ReplyInput(platform, conversation_id, text, key, updates=updates))


def command_variables(environment: EnvironmentRef, ports: PortBlock | None) -> dict[str, str]:
    """What set-up, teardown and agent commands are told about their environment."""
    variables = {
        "ISOLATOR_BRANCH": environment.branch,
        "ISOLATOR_WORKTREE": environment.working_path,
        "ISOLATOR_ENVIRONMENT_ID": environment.environment_id,
        "COMPOSE_PROJECT_NAME": compose_project(environment.codebase.name, environment.branch,
                                                environment.environment_id),
    }
    if ports is not None:
        variables["ISOLATOR_PORT"] = str(ports.first)
        variables["ISOLATOR_PORTS"] = f"{ports.first}-{ports.last}"
    return variables


def compose_project(codebase: str, branch: str, environment_id: str) -> str:
    """Unique per environment, in the characters Docker Compose allows."""
    name = re.sub(r"[^a-z0-9_-]+", "-", f"{codebase}-{branch}".lower()).strip("-_")
    return f"{name[:40]}-{environment_id.replace('-', '')[:8]}"


class _Progress:
    """One message per conversation, posted once the commands have run 5 s, then updated in place."""

    def __init__(self, activities: SetupActivities, request: CommandsRequest, commands: list[str]) -> None:
        self.activities, self.request, self.commands = activities, request, commands
        self.started = time.monotonic()
        self.posted = False
        self.number, self.command = 0, ""

    def now(self, number: int, command: str) -> None:
        self.number, self.command = number, command

    def shown(self) -> "_Showing":
        return _Showing(self)

    async def tick(self) -> None:
        elapsed = time.monotonic() - self.started
        what = "Tearing down" if self.request.teardown else "Setting up"
        text = (f"{what} `{self.request.environment.branch}`: `{self.command}` "
                f"({self.number}/{len(self.commands)}), {_duration(elapsed)}…")
        await self._say(text)

    async def end(self, report: CommandsReport) -> None:
        if report.outcome == "done" and not self.posted:
            return  # quick and fine: the creation reply said all there is to say
        await self._say(outcome_text(self.request, report))

    async def _say(self, text: str) -> None:
        for conversation in self.request.tell:
            key = f"{self.request.key}:{conversation}"
            await self.activities.tell(conversation, key, text, updates=key if self.posted else None)
        self.posted = True


class _Showing:
    def __init__(self, progress: _Progress) -> None:
        self.progress = progress
        self.task: asyncio.Task | None = None

    async def __aenter__(self) -> None:
        self.task = asyncio.create_task(self._loop())

    async def __aexit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def _loop(self) -> None:
        await asyncio.sleep(SHOW_PROGRESS_AFTER_SECONDS)
        while True:
            await self.progress.tick()
            await asyncio.sleep(PROGRESS_EVERY_SECONDS)


def outcome_text(request: CommandsRequest, report: CommandsReport) -> str:
    branch = request.environment.branch
    what = "Teardown of" if request.teardown else "Set-up of"
    if report.outcome == "done":
        return f"{what} `{branch}` done in {_duration(report.seconds)}." if request.teardown else \
            f"Ready in {_duration(report.seconds)}: `{branch}` is set up."
    how = (f"was stopped: {report.limit}" if report.limit else f"exited with code {report.exit_code}"
           if report.exit_code is not None else "was stopped at the time limit")
    lines = "\n".join(report.tail) or "(no output)"
    again = "" if request.teardown else "\nFix it and run `/worktree setup` to try again."
    return f"{what} `{branch}` failed: `{report.failed_command}` {how}.\n```\n{lines}\n```{again}"


def _duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"
