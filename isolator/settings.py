"""Configuration from environment variables, validated once at start."""

from __future__ import annotations

import shlex
import socket
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from isolator.approval_rules import ApprovalRules, RuleError, parse_rules
from isolator.automation_settings import AutomationSettings
from isolator.github_app_settings import GitHubAppSettings
from isolator.host_settings import HostSettings
from isolator.observability_settings import ObservabilitySettings
from isolator.sandbox_settings import SandboxSettings
from isolator.slack_settings import SlackSocketSettings
from isolator.telegram_settings import TelegramSettings
from isolator.trust_settings import TrustSettings


class ConfigurationError(Exception):
    """A variable has an invalid value; the message names the variable."""


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


# Each concern's settings live in its own module under isolator/*_settings.py.
class Settings(TrustSettings, SandboxSettings, TelegramSettings, GitHubAppSettings, SlackSocketSettings, HostSettings,
               ObservabilitySettings, AutomationSettings):
    # An empty variable (`API_TOKEN=`) means unset, as in a compose file that passes it through.
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, env_ignore_empty=True)

    database_url: str | None = Field(None, validation_alias=_env("DATABASE_URL"))
    temporal_address: str = Field("localhost:7233", validation_alias=_env("TEMPORAL_ADDRESS"))
    temporal_namespace: str = Field("default", validation_alias=_env("TEMPORAL_NAMESPACE"))
    data_dir: Path = Field(Path("~/.isolator"), validation_alias=_env("ISOLATOR_DATA_DIR"))
    workspace_path_setting: Path | None = Field(None, validation_alias=_env("WORKSPACE_PATH"))
    worktree_base_setting: Path | None = Field(None, validation_alias=_env("WORKTREE_BASE"))
    max_worktrees_per_codebase: int = Field(25, ge=1, validation_alias=_env("MAX_WORKTREES_PER_CODEBASE"))
    stale_threshold_days: int = Field(14, ge=1, validation_alias=_env("STALE_THRESHOLD_DAYS"))
    # Every removal is archived; the scheduled cleanup prunes archives older than this.
    archive_retention_days: int = Field(30, ge=1, validation_alias=_env("ARCHIVE_RETENTION_DAYS"))
    # Per codebase; over it, the scheduled cleanup hibernates idle worktrees. Unset: no budget.
    disk_budget_gb: float | None = Field(None, gt=0, validation_alias=_env("DISK_BUDGET_GB"))
    # Worktrees per codebase made and set up in advance at the fresh base, claimed by new conversations
    # (docs/warm.md); 0 turns the pool off. A codebase may override it through the API.
    warm_worktrees: int = Field(1, ge=0, le=20, validation_alias=_env("WARM_WORKTREES"))
    # `isolator api` also hosts the shared queue's worker and starts message workflows eagerly (docs/warm.md).
    eager_start: bool = Field(True, validation_alias=_env("EAGER_START"))
    cleanup_interval_hours: int = Field(6, ge=1, validation_alias=_env("CLEANUP_INTERVAL_HOURS"))
    # A new worktree starts from origin's default branch, fetched at most once per this many seconds.
    fetch_interval_seconds: int = Field(60, ge=0, validation_alias=_env("FETCH_INTERVAL_SECONDS"))
    # Each active environment holds a block of ports from this range (`first-last`).
    port_range: str = Field("20000-29999", pattern=r"^\d{1,5}-\d{1,5}$", validation_alias=_env("PORT_RANGE"))
    # The coding agent every message that is not a command is handed to, run in its worktree. A
    # shell-quoted command line, split with shlex and never run through a shell; unset: isolation only.
    agent_command_line: str | None = Field(None, validation_alias=_env("AGENT_COMMAND"))
    # The agent driver (docs/agent-drivers.md): `claude`, `codex`, `aider` or `command`. Unset:
    # `command` when AGENT_COMMAND is set, else none. AGENT wins over AGENT_COMMAND.
    agent_driver: Literal["claude", "codex", "aider", "command"] | None = Field(None, validation_alias=_env("AGENT"))
    # The driver's program (default: `claude`, `codex` or `aider` on PATH), and extra arguments (shlex).
    agent_executable: str | None = Field(None, min_length=1, validation_alias=_env("AGENT_EXECUTABLE"))
    agent_args_line: str | None = Field(None, validation_alias=_env("AGENT_ARGS"))
    # Tool calls that need a person's yes, and calls never allowed, in Claude Code's rule syntax
    # (docs/approvals.md): `ask: Bash(git push:*), Write(migrations/**); deny: WebFetch`. Unset: none.
    agent_approvals_line: str | None = Field(None, validation_alias=_env("AGENT_APPROVALS"))
    # How long a request waits for its answer before it is denied.
    approval_timeout_hours: float = Field(24, gt=0, le=24 * 30, validation_alias=_env("APPROVAL_TIMEOUT_HOURS"))
    # USD one run may cost; per codebase and UTC day. Unset: no cap.
    agent_max_cost_usd: float | None = Field(None, gt=0, validation_alias=_env("AGENT_MAX_COST_USD"))
    agent_daily_budget_usd: float | None = Field(None, gt=0, validation_alias=_env("AGENT_DAILY_BUDGET_USD"))
    agent_timeout_minutes: float = Field(30, gt=0, le=24 * 60, validation_alias=_env("AGENT_TIMEOUT_MINUTES"))
    # Runs at once per worker host; more wait, in order.
    agent_max_concurrent: int = Field(4, ge=1, le=1000, validation_alias=_env("AGENT_MAX_CONCURRENT"))
    # A team's own agent as a Temporal workflow (any SDK): started as a child of each run, on its queue.
    agent_workflow: str | None = Field(None, min_length=1, validation_alias=_env("AGENT_WORKFLOW"))
    agent_workflow_task_queue: str | None = Field(None, min_length=1, validate_default=True,
                                                  validation_alias=_env("AGENT_TASK_QUEUE"))
    github_webhook_secret: SecretStr | None = Field(None, validation_alias=_env("GITHUB_WEBHOOK_SECRET"))
    github_token: SecretStr | None = Field(None, validation_alias=_env("GITHUB_TOKEN"))
    github_api_url: str = Field("https://api.github.com", validation_alias=_env("GITHUB_API_URL"))
    slack_signing_secret: SecretStr | None = Field(None, validation_alias=_env("SLACK_SIGNING_SECRET"))
    slack_bot_token: SecretStr | None = Field(None, validation_alias=_env("SLACK_BOT_TOKEN"))
    slack_api_url: str = Field("https://slack.com/api/", validation_alias=_env("SLACK_API_URL"))
    discord_bot_token: SecretStr | None = Field(None, validation_alias=_env("DISCORD_BOT_TOKEN"))
    # The application's Ed25519 public key (64 hex digits): interactions are verified with it.
    discord_public_key: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$", validation_alias=_env("DISCORD_PUBLIC_KEY"))
    discord_application_id: str | None = Field(None, pattern=r"^[0-9]{1,20}$",
                                               validation_alias=_env("DISCORD_APPLICATION_ID"))
    discord_api_url: str = Field("https://discord.com/api/v10", validation_alias=_env("DISCORD_API_URL"))
    # After a run ends `done`: commit what the agent left, push its branch, open or update the PR (docs/results.md).
    results: Literal["on", "off"] = Field("on", validation_alias=_env("RESULTS"))
    # The committer of the service's commits (the agent is their author): `Name <email>`.
    results_committer: str = Field("isolator <isolator@localhost>", pattern=r"^[^<>\n]+ <[^<>\s]+>$",
                                   validation_alias=_env("RESULTS_COMMITTER"))
    # The pull-request loop (docs/pr-loop.md): red CI on a head the service pushed starts a fix run, at most
    # AUTOFIX_MAX_ATTEMPTS in a row whose heads stayed red; with RESULTS_READY_WHEN_GREEN a draft PR whose
    # checks all pass after a run is marked ready for review.
    autofix: Literal["on", "off"] = Field("on", validation_alias=_env("AUTOFIX"))
    autofix_max_attempts: int = Field(3, ge=1, le=20, validation_alias=_env("AUTOFIX_MAX_ATTEMPTS"))
    results_ready_when_green: bool = Field(False, validation_alias=_env("RESULTS_READY_WHEN_GREEN"))
    bot_mention: str = Field("@isolator", min_length=2, validation_alias=_env("BOT_MENTION"))
    api_token: SecretStr | None = Field(None, validation_alias=_env("API_TOKEN"))
    # Host names the HTTP server answers to besides the loopback names and PUBLIC_URL's (comma-separated).
    allowed_hosts: str | None = Field(None, validation_alias=_env("ALLOWED_HOSTS"))
    # How long a dashboard login lasts.
    session_hours: float = Field(12, gt=0, le=24 * 366, validation_alias=_env("SESSION_HOURS"))
    # The Temporal UI's address, for the dashboard's links to an environment's workflows. Unset: no links.
    temporal_ui_url: str | None = Field(None, pattern=r"^https?://[^\s]+$", validation_alias=_env("TEMPORAL_UI_URL"))
    # The host this process runs on; git work for a codebase goes to `isolation@{host}`.
    host: str = Field(default_factory=socket.gethostname, min_length=1, validation_alias=_env("ISOLATOR_HOST"))
    task_queue: str = Field("isolation", min_length=1, validation_alias=_env("ISOLATOR_TASK_QUEUE"))
    test_adapter: bool = Field(False, validation_alias=_env("ISOLATOR_TEST_ADAPTER"))

    @field_validator("data_dir", "workspace_path_setting", "worktree_base_setting")
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        return value.expanduser().absolute() if value is not None else None

    @field_validator("port_range")
    @classmethod
    def _ordered_ports(cls, value: str) -> str:
        first, last = (int(part) for part in value.split("-"))
        if not 1024 <= first <= last <= 65535:
            raise ValueError("must be `first-last` with 1024 <= first <= last <= 65535")
        return value

    @field_validator("agent_command_line", "agent_args_line")
    @classmethod
    def _splittable(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            try:
                words = shlex.split(value)
            except ValueError as error:
                raise ValueError(f"cannot be split as a command line ({error})") from None
            if not words and info.field_name == "agent_command_line":
                raise ValueError("names no program")
        return value

    @field_validator("agent_driver")
    @classmethod
    def _command_of_command_driver(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value == "command" and not info.data.get("agent_command_line"):
            raise ValueError("`command` needs AGENT_COMMAND, the program to run")
        return value

    @field_validator("agent_approvals_line")
    @classmethod
    def _readable_rules(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_rules(value)
            except RuleError as error:
                raise ValueError(str(error)) from None
        return value

    @model_validator(mode="after")
    def _approvals_askable(self) -> Settings:
        """Only Claude Code and Codex (its app-server) can ask here: refused at start for another agent, in one line."""
        driver = self.agent_driver or ("command" if self.agent_command_line else None)
        if self.agent_approvals.active and (self.agent_workflow or driver not in (None, "claude", "codex")):
            raise ValueError(f"AGENT_APPROVALS: approvals need Claude Code or Codex app-server; "
                             f"{'AGENT_WORKFLOW' if self.agent_workflow else f'AGENT={driver}'} cannot ask. "
                             "Set AGENT=claude or AGENT=codex, or unset AGENT_APPROVALS")
        return self

    @field_validator("agent_workflow_task_queue")
    @classmethod
    def _queue_of_agent_workflow(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("agent_workflow"):
            raise ValueError("must name the task queue of AGENT_WORKFLOW's workers")
        return value

    @field_validator("host")
    @classmethod
    def _plain_host(cls, value: str) -> str:
        if any(ch.isspace() or ch == "@" for ch in value):
            raise ValueError("must not contain spaces or '@'")
        return value

    @cached_property
    def workspace_path(self) -> Path:
        """Where `/clone` puts repositories (default: `<data dir>/workspace`)."""
        return self.workspace_path_setting or self.data_dir / "workspace"

    @cached_property
    def worktree_base(self) -> Path:
        """The only tree the service creates worktrees in (default: `<data dir>/worktrees`)."""
        return self.worktree_base_setting or self.data_dir / "worktrees"

    @property
    def ports(self) -> tuple[int, int]:
        first, last = self.port_range.split("-")
        return int(first), int(last)

    def host_task_queue(self, host: str | None = None) -> str:
        return f"{self.task_queue}@{host or self.host}"

    def agent_task_queue(self, host: str | None = None) -> str:
        """Where the host's agent runs wait for one of its AGENT_MAX_CONCURRENT slots."""
        return agent_queue_of(self.host_task_queue(host))

    @property
    def agent_command(self) -> list[str] | None:
        return shlex.split(self.agent_command_line) if self.agent_command_line else None

    @property
    def agent_args(self) -> list[str]:
        return shlex.split(self.agent_args_line) if self.agent_args_line else []

    @property
    def agent_approvals(self) -> ApprovalRules:
        return parse_rules(self.agent_approvals_line) if self.agent_approvals_line else ApprovalRules()

    @property
    def agent_home(self) -> Path:
        return self.data_dir / "agent-home"

    @property
    def extra_allowed_hosts(self) -> list[str]:
        return _listed(self.allowed_hosts)

    @property
    def agent_sessions_dir(self) -> Path:
        """One folder per agent session (the command driver's ISOLATOR_SESSION_DIR, Aider's history)."""
        return self.data_dir / "agent-sessions"


def _listed(value: str | None) -> list[str]:
    return [part.strip().lower() for part in (value or "").replace(" ", ",").split(",") if part.strip()]


def agent_queue_of(host_queue: str) -> str:
    return f"{host_queue}/agents"


_ALIASES = {name: field.validation_alias.choices[0] for name, field in Settings.model_fields.items()}


def load_settings(**overrides: object) -> Settings:
    """Read the environment; an invalid value raises ConfigurationError naming the variable."""
    try:
        return Settings(**overrides)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            if not item["loc"]:  # a rule between settings, which names them itself
                problems.append(item["msg"].removeprefix("Value error, "))
                continue
            field = str(item["loc"][0])
            problems.append(f"{_ALIASES.get(field, field)}: {item['msg']}")
        raise ConfigurationError("invalid configuration: " + "; ".join(problems)) from None
