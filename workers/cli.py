"""The `isolator` command."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import sys
import traceback
from pathlib import Path
from typing import Optional

import typer

from isolator.settings import ConfigurationError, Settings, load_settings
from workers.exiting import exit_code, leave

# Plain help, as click writes it: typer's rich panels label every option with its Python type (`<int>`,
# `<bool>` even for `--help`).
app = typer.Typer(add_completion=False, rich_markup_mode=None,
                  help="Gives every AI-coding conversation its own git worktree.")


def _settings(**overrides: object) -> Settings:
    try:
        return load_settings(**overrides)
    except ConfigurationError as error:
        typer.echo(f"isolator: {error}", err=True)
        raise typer.Exit(2) from None


def _require_database(settings: Settings) -> str:
    if not settings.database_url:
        typer.echo("isolator: DATABASE_URL is not set", err=True)
        raise typer.Exit(2)
    return settings.database_url


@app.command(short_help="Run the whole service on this machine.")
def dev(
    api_port: int = typer.Option(8000, metavar="PORT", help="port of the API"),
    temporal_port: int = typer.Option(7233, metavar="PORT", help="port of the embedded Temporal server"),
    ui_port: int = typer.Option(8233, metavar="PORT", help="port of the Temporal UI"),
    data_dir: Optional[Path] = typer.Option(None, metavar="FOLDER",
                                            help="state directory (default: ISOLATOR_DATA_DIR or ~/.isolator)"),
) -> None:
    """Run the whole service on this machine: Temporal, PostgreSQL, worker and API."""
    from workers.data_dir_owner import DataDirInUse
    from workers.dev import DevPorts, PortInUse, run_dev, with_default_agent

    overrides = {"data_dir": data_dir} if data_dir else {}
    settings = with_default_agent(_settings(**overrides))
    _observe(settings, logging.WARNING, "isolator")
    try:
        asyncio.run(run_dev(settings, DevPorts(api=api_port, temporal=temporal_port, ui=ui_port)))
    except (PortInUse, DataDirInUse) as error:
        typer.echo(f"isolator: {error}", err=True)
        raise typer.Exit(1) from None


@app.command()
def migrate() -> None:
    """Apply pending database migrations (DATABASE_URL)."""
    from migrations.runner import apply_migrations

    settings = _settings()
    applied = asyncio.run(apply_migrations(_require_database(settings)))
    typer.echo("applied: " + ", ".join(applied) if applied else "up to date")


@app.command(short_help="Run a worker (the shared queue and this host's).")
def worker(
    drain: bool = typer.Option(False, "--drain", help="stop this host's running workers once their agent runs end "
                                                      "(up to WORKER_DRAIN_SECONDS), and wait for them"),
) -> None:
    """Run a worker: the shared queue and this host's queue (ISOLATOR_HOST)."""
    settings = _settings()
    _require_database(settings)
    if drain:
        from workers.drain import drain_workers

        raise typer.Exit(asyncio.run(drain_workers(settings, typer.echo)))
    from workers.processes import run_worker  # the whole service: not for a refusal

    _observe(settings, logging.INFO, "isolator-worker")
    asyncio.run(run_worker(settings))


@app.command()
def api(
    host: str = typer.Option("127.0.0.1", metavar="ADDRESS",
                             help="address to listen on (another than loopback needs API_TOKEN)"),
    port: int = typer.Option(8000, metavar="PORT", help="port to listen on"),
) -> None:
    """Run the API server (with EAGER_START, also the shared queue's worker, for eager message starts)."""
    settings = _settings()
    if settings.api_token is None and not _is_loopback(host):
        typer.echo(f"isolator: refusing to listen on {host} without API_TOKEN: anyone who reaches it could read "
                   "and run everything; set API_TOKEN, or listen on 127.0.0.1 (the default)", err=True)
        raise typer.Exit(2)
    _require_database(settings)
    from workers.api_process import run_api  # the whole service (~2 s): not for a refusal

    _observe(settings, logging.INFO, "isolator-api")
    asyncio.run(run_api(settings, host, port))


def _observe(settings: Settings, level: int, service: str) -> None:
    """Logs as LOG_FORMAT says, and traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/observability.md)."""
    from isolator import tracing
    from workers.log_format import configure_logging

    configure_logging(settings.log_format, level, settings.host)
    tracing.start_tracing(service)


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@app.command(short_help="Check what is configured, and say how to fix what is wrong.")
def doctor() -> None:
    """Check everything that is configured (the platforms' tokens, the agent, the sandbox, PostgreSQL,
    Temporal, free disk space), one line each with the fix; exit code 1 when any check fails."""
    from activities.doctor.report import all_ok, run_checks

    try:
        settings = load_settings()
    except ConfigurationError as error:  # a problem the doctor finds too: said as its checks are, exit code 1
        typer.echo(f"FAIL  Settings: {error}. Fix: correct the variables named, or unset them for their defaults")
        raise typer.Exit(1) from None
    checks = asyncio.run(run_checks(settings))
    for check in checks:
        typer.echo(check.line())
    raise typer.Exit(0 if all_ok(checks) else 1)


@app.command(short_help="Run the Discord listener (DISCORD_BOT_TOKEN).")
def discord() -> None:
    """Run the Discord listener: messages and thread events from Discord's Gateway (DISCORD_BOT_TOKEN)."""
    from workers.discord_listener import explained, run_discord_listener

    settings = _settings()
    _require_database(settings)
    if settings.discord_bot_token is None:
        typer.echo("isolator: DISCORD_BOT_TOKEN is not set", err=True)
        raise typer.Exit(2)
    _observe(settings, logging.INFO, "isolator-discord")
    try:
        asyncio.run(run_discord_listener(settings))
    except Exception as error:
        typer.echo(f"isolator: {explained(error)}", err=True)
        raise typer.Exit(1) from None


@app.command("secret-key", short_help="Print a new key for ISOLATOR_SECRET_KEY.")
def secret_key() -> None:
    """Print a new Fernet key: set ISOLATOR_SECRET_KEY to it, in every process, to store a GitHub App made
    through the dashboard's Connect GitHub page (encrypted with it). Keep it: what it encrypted needs it."""
    from cryptography.fernet import Fernet

    typer.echo(Fernet.generate_key().decode())


@app.command("fake-model", short_help="Serve a scripted model, to try AGENT=claude without an API key.")
def fake_model(port: int = typer.Option(8765, metavar="PORT", help="port to listen on, on 127.0.0.1")) -> None:
    """Serve a scripted model on 127.0.0.1 (Anthropic's Messages API, no key, no intelligence): `run: <command>`
    runs it, `write <file>: <text>` writes it. It prints the variables that point Claude Code at it
    (docs/agent.md)."""
    from workers.fake_model.scripted import serve

    try:
        asyncio.run(serve(port))
    except OSError as error:
        typer.echo(f"isolator: the fake model cannot listen on 127.0.0.1:{port} ({error.strerror}): choose another "
                   "port with --port", err=True)
        raise typer.Exit(1) from None


def main() -> None:
    try:
        app(prog_name="isolator")
    except SystemExit as exit:  # every command ends here, typer's way
        leave(exit_code(exit))
    except BaseException:  # noqa: BLE001 - said as Python would, then the same way out
        traceback.print_exc()
        leave(1)
    leave(0)


if __name__ == "__main__":
    sys.exit(main())
