"""The codebase page's "Move" button: `POST /codebases/{name}/move` (host in the form) starts the same move as
`POST /api/codebases/{id}/move` (api/codebase_moves.py), checked the same way; the outcome page says it
started, or why not, and the codebase page shows `moving`, then `moved` with the new host."""

from __future__ import annotations

from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from temporalio.client import Client

from api.codebase_moves import MoveRefused, checked_move, start_move
from api.dashboard.access import Refused, actor
from api.dashboard.rendering import PageRoute, render
from api.deps import get_client, get_pool, get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)


@router.post("/codebases/{name}/move", include_in_schema=False)
async def move(
    name: str,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    codebase = await pool.fetchrow("SELECT id, name FROM codebases WHERE name = $1", name)
    if codebase is None:
        raise Refused(404, f"No codebase named {name!r}.")
    host = form.get("host", "").strip()
    back = (f"/codebases/{name}", name)
    if not host or len(host) > 255 or any(ch.isspace() or ch == "@" or not ch.isprintable() for ch in host):
        return render(request, request.state.session, "outcome.html", ok=False, back=back, force_form=None,
                      message="Name the host to move it to: its workers' ISOLATOR_HOST.")
    try:
        move_request = await checked_move(pool, client, settings, str(codebase["id"]), host)
    except MoveRefused as refused:
        return render(request, request.state.session, "outcome.html", ok=False, back=back, force_form=None,
                      message=f"Not moved: {refused.reason}.")
    await start_move(client, settings, move_request, wait=False)
    return render(request, request.state.session, "outcome.html", ok=True, back=back, force_form=None,
                  message=f"Moving `{name}` to {host}: cloned there, each worktree's work carried over through "
                          "origin, each conversation told. Its page shows `moved` when it is done.")
