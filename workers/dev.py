"""`isolator dev`: the whole service on one machine, with nothing else to set up."""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import sys
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import uvicorn
from temporalio.client import Client

from activities.chat.platforms.github_app.credentials import banner_line
from activities.database import create_pool
from activities.doctor.report import run_checks
from activities.runs.agents import EXAMPLE_AGENT, HOW_TO_GET, program_path
from activities.runs.queue import plan_for
from api.app import SHUTDOWN_GRACE_SECONDS, create_app
from api.platforms.slack.socket import slack_socket
from isolator import temporal_metrics
from isolator.payloads import connect
from isolator.settings import Settings
from migrations.runner import apply_migrations
from workers.data_dir_owner import own_data_dir
from workers.discord_listener import running_discord_listener
from workers.postgres import EmbeddedPostgres, start_embedded_postgres
from workers.schedule import ensure_cleanup_schedule
from workers.serving import ApiServer, serve_until, stop_on_signals
from api.platforms.telegram.webhook_setup import telegram_updates
from workers.temporal_server import TemporalDevServer, start_dev_server
from workers.presence import present
from workers.worker import running_workers


# Set, even empty (isolation only), any of these chooses the agent: `isolator dev` then leaves it alone.
AGENT_CHOICES = ("AGENT", "AGENT_COMMAND", "AGENT_WORKFLOW")


class PortInUse(Exception):
    pass


def with_default_agent(settings: Settings) -> Settings:
    """The example agent answers, driven as Claude Code is, unless the environment chose an agent (or
    none, `AGENT_COMMAND=`)."""
    if any(name in os.environ for name in AGENT_CHOICES) or not EXAMPLE_AGENT.is_file():
        return settings
    return settings.model_copy(update={"agent_driver": "claude", "agent_executable": str(EXAMPLE_AGENT)})


def agent_line(settings: Settings) -> str:
    """Who answers a message, as the banner says it (a codebase's own `agent_command` still wins)."""
    plan = plan_for(settings, None)
    if plan.kind == "workflow":
        return f"workflow `{plan.workflow}` on task queue `{plan.task_queue}` ({plan.source})"
    if plan.kind == "command":
        if plan.argv == [str(EXAMPLE_AGENT)]:
            return (f"the example agent, {EXAMPLE_AGENT}, driven as Claude Code is "
                    "(AGENT or AGENT_COMMAND chooses another; AGENT_COMMAND= empty: isolation only)")
        if plan.driver == "command":
            return f"{shlex.join(plan.argv)} ({plan.source})"
        found = program_path(plan.driver, plan.argv[0])
        if found is None:
            return (f"the {plan.driver} driver, but `{plan.argv[0]}` ({plan.source}) was not found: "
                    f"{HOW_TO_GET[plan.driver]}, or set AGENT_EXECUTABLE to it")
        return f"the {plan.driver} driver: {shlex.join([found, *plan.argv[1:]])} ({plan.source})"
    return "none, isolation only: messages get a worktree and no answer (AGENT or AGENT_COMMAND sets an agent)"


@dataclass
class DevPorts:
    api: int = 8000
    temporal: int = 7233
    ui: int = 8233


def check_ports_free(ports: DevPorts) -> None:
    flags = (("--api-port", ports.api), ("--temporal-port", ports.temporal), ("--ui-port", ports.ui))
    for index, (flag, port) in enumerate(flags):
        # Each probe below is closed before the next, so the same port twice would pass them all.
        for other, same in flags[index + 1:]:
            if same == port:
                raise PortInUse(f"{flag} and {other} are both {port}; give each its own port")
    for flag, port in flags:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                raise PortInUse(f"port {port} is already in use; choose another with {flag}") from None


async def run_dev(settings: Settings, ports: DevPorts) -> None:
    check_ports_free(ports)
    owner = own_data_dir(settings.data_dir)
    stop = asyncio.Event()
    stop_on_signals(stop)
    data_dir = settings.data_dir
    postgres: EmbeddedPostgres | None = None
    temporal: TemporalDevServer | None = None
    try:
        if settings.database_url is None:
            postgres = await start_embedded_postgres(data_dir / "postgres")
        database_url = settings.database_url or postgres.url  # type: ignore[union-attr]
        temporal = await start_dev_server(
            port=ports.temporal, ui_port=ports.ui, db_file=data_dir / "temporal.db",
            log_path=data_dir / "logs" / "temporal.log", namespace=settings.temporal_namespace,
        )
        await apply_migrations(database_url)
        settings = settings.model_copy(
            update={"database_url": database_url, "temporal_address": temporal.address, "test_adapter": True,
                    "temporal_ui_url": settings.temporal_ui_url or temporal.ui_url}
        )
        temporal_metrics.install()  # before the first client: /metrics includes the Temporal SDK's
        client = await connect(temporal.address, settings.temporal_namespace)
        pool = await create_pool(database_url)
        try:
            app = create_app(settings, temporal=client, pool=pool)
            server = ApiServer(uvicorn.Config(app, host="127.0.0.1", port=ports.api, log_level="warning",
                                              timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS, log_config=None))
            async with (present(pool, settings, "worker", runs_messages=True), running_workers(client, pool, settings),
                        _discord(settings, client, pool), telegram_updates(settings, client, pool),
                        slack_socket(settings, client, pool)):
                await ensure_cleanup_schedule(client, settings)
                _announce(settings, ports, temporal, database_url)
                # Beside the serving, so that a slow check (an agent's --version) delays no request.
                problems = asyncio.create_task(_say_problems(settings))
                try:
                    await serve_until(stop, server)
                finally:
                    problems.cancel()
        finally:
            await pool.close()
    finally:
        if temporal is not None:
            await temporal.stop()
        if postgres is not None:
            await postgres.stop()
        owner.close()
        print("isolator dev stopped", file=sys.stderr, flush=True)


def _discord(settings: Settings, client: Client, pool: asyncpg.Pool) -> AbstractAsyncContextManager[object]:
    """Discord's Gateway listener, when DISCORD_BOT_TOKEN is set."""
    if settings.discord_bot_token is None:
        return nullcontext()
    return running_discord_listener(settings, client, pool)


def _announce(settings: Settings, ports: DevPorts, temporal: TemporalDevServer, database_url: str) -> None:
    print(
        "isolator dev is running\n"
        f"  Dashboard:    http://127.0.0.1:{ports.api}/\n"
        f"  API:          http://127.0.0.1:{ports.api}  (test adapter: POST /test/message)\n"
        f"  Temporal UI:  {temporal.ui_url}\n"
        f"  Temporal:     {temporal.address}\n"
        f"  Database:     {database_url}\n"
        f"  Worktrees:    {settings.worktree_base}\n"
        f"  Data dir:     {Path(settings.data_dir)}\n"
        f"  Agent:        {agent_line(settings)}\n"
        + (f"  GitHub:       {github}\n" if (github := banner_line(settings)) else "")
        + ("  Discord:      listening on the Gateway (DISCORD_BOT_TOKEN)\n" if settings.discord_bot_token else "")
        + ("  Telegram:     polling for updates (TELEGRAM_MODE=polling)\n" if settings.telegram_polls else "")
        + ("  Slack:        over Socket Mode (SLACK_APP_TOKEN)\n" if settings.slack_app_token else "")
        + "Press Ctrl-C to stop.",
        flush=True,
    )


async def _say_problems(settings: Settings) -> None:
    """What `isolator doctor` finds wrong, after the banner: a part configured wrong is said at start,
    rather than by the first message that needs it. What is OK stays unsaid."""
    problems = [check for check in await run_checks(settings) if not check.ok]
    if problems:
        print("Problems found (isolator doctor):\n" + "\n".join(f"  {check.line()}" for check in problems),
              flush=True)
