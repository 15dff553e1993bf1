"""The dashboard: server-rendered pages of every codebase, worktree, run and archive, live where it
matters, with the actions a maintainer needs (each the same workflow chat and REST use).

One module per page group; templates in templates/, the little CSS and JavaScript in static/, both
shipped in the package (nothing is loaded from the internet)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from api.dashboard import answers, cleanup, codebase, environment, github_connect, login, overview, runs
from api.dashboard import codebase_move
from api.dashboard import doctor
from api.dashboard import hosts
from api.dashboard import automations
from api.dashboard.access import Access
from api.dashboard.live import RunListener
from api.dashboard.rendering import STATIC, install_handlers
from isolator.settings import Settings


def install(app: FastAPI, settings: Settings) -> None:
    app.state.dashboard_access = Access(settings)
    app.state.run_listener = RunListener(settings.database_url or "")
    for module in (overview, codebase, environment, runs, answers, cleanup, login, github_connect, codebase_move):
        app.include_router(module.router)
    app.include_router(doctor.router)  # /doctor: what `isolator doctor` finds
    app.include_router(hosts.router)  # /hosts: which hosts are alive, and processes that differ
    app.include_router(automations.router)  # /automations: their next and last firings, pause, resume, run now
    app.mount("/static", StaticFiles(directory=STATIC), name="dashboard-static")
    install_handlers(app)
