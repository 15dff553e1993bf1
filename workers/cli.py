"""The `isolator` command."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from isolator.settings import ConfigurationError, Settings, load_settings

app = typer.Typer(add_completion=False, help="Gives every AI-coding conversation its own git worktree.")


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


@app.command()
def dev(
    api_port: int = typer.Option(8000, help="port of the API"),
    temporal_port: int = typer.Option(7233, help="port of the embedded Temporal server"),
    ui_port: int = typer.Option(8233, help="port of the Temporal UI"),
    data_dir: Optional[Path] = typer.Option(None, help="state directory (default: ISOLATOR_DATA_DIR or ~/.isolator)"),
) -> None:
    """Run the whole service on this machine: Temporal, PostgreSQL, worker and API."""
    from workers.dev import DevPorts, PortInUse, run_dev

    overrides = {"data_dir": data_dir} if data_dir else {}
    settings = _settings(**overrides)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_dev(settings, DevPorts(api=api_port, temporal=temporal_port, ui=ui_port)))
    except PortInUse as error:
        typer.echo(f"isolator: {error}", err=True)
        raise typer.Exit(1) from None


@app.command()
def migrate() -> None:
    """Apply pending database migrations (DATABASE_URL)."""
    from migrations.runner import apply_migrations

    settings = _settings()
    applied = asyncio.run(apply_migrations(_require_database(settings)))
    typer.echo("applied: " + ", ".join(applied) if applied else "up to date")


@app.command()
def worker() -> None:
    """Run a worker: the shared queue and this host's queue (ISOLATOR_HOST)."""
    from workers.processes import run_worker

    settings = _settings()
    _require_database(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(run_worker(settings))


@app.command()
def api(
    host: str = typer.Option("0.0.0.0", help="address to listen on"),
    port: int = typer.Option(8000, help="port to listen on"),
) -> None:
    """Run the API server."""
    import uvicorn

    from api.app import SHUTDOWN_GRACE_SECONDS, create_app

    settings = _settings()
    _require_database(settings)
    # A dashboard page's event stream stays open while its run goes on: the shutdown ends it after this.
    uvicorn.run(create_app(settings), host=host, port=port, timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS)


@app.command()
def discord() -> None:
    """Run the Discord listener: messages and thread events from Discord's Gateway (DISCORD_BOT_TOKEN)."""
    from workers.discord_listener import explained, run_discord_listener

    settings = _settings()
    _require_database(settings)
    if settings.discord_bot_token is None:
        typer.echo("isolator: DISCORD_BOT_TOKEN is not set", err=True)
        raise typer.Exit(2)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_discord_listener(settings))
    except Exception as error:
        typer.echo(f"isolator: {explained(error)}", err=True)
        raise typer.Exit(1) from None


def main() -> None:
    app(prog_name="isolator")


if __name__ == "__main__":
    sys.exit(main())
