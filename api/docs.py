"""The API's schema and its pages (`/openapi.json`, `/docs`, `/redoc`), behind the API's own door.

The schema names every route and field of the API: with API_TOKEN set it takes the bearer token, as
`/api` does, or the dashboard's login, since a browser opening `/docs` has no header to send (the page's
script then fetches the schema with the session's cookie); without, this machine's loopback only. The
pages' scripts and styles come from fastapi-offline's package, never a CDN (a machine that cannot
reach one would show a blank page).
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import Depends, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from api.dashboard.access import LoginNeeded, access_of
from api.dashboard.sessions import session_is_open
from api.deps import get_settings, require_api_token

SCHEMA = "/openapi.json"
ASSETS = "/static-offline-docs"
ASSET_FILES = Path(fastapi_offline.__file__).parent / "static"


async def _logged_in(request: Request) -> bool:
    """An open dashboard session (with API_TOKEN set: without it, a cookie proves nothing)."""
    if (await get_settings(request)).api_token is None:
        return False
    session_id = access_of(request).session_of(request)
    return session_id is not None and await session_is_open(request.app.state.pool, session_id)


async def schema_reader(request: Request) -> None:
    """A program, with the bearer token; or the page's script, with the dashboard's session."""
    if not await _logged_in(request):
        await require_api_token(request)


async def page_reader(request: Request) -> None:
    """A person's browser: without a session or a token, to the login form, and back here after it."""
    if await _logged_in(request):
        return
    if (await get_settings(request)).api_token is not None and "authorization" not in request.headers:
        raise LoginNeeded()
    await require_api_token(request)


def install(app: FastAPI) -> None:
    """The schema and its pages; the app is made with FastAPI's own (which take no dependency) turned off."""
    app.mount(ASSETS, StaticFiles(directory=ASSET_FILES), name="static-offline-docs")

    @app.get(SCHEMA, include_in_schema=False, dependencies=[Depends(schema_reader)])
    async def schema() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False, dependencies=[Depends(page_reader)])
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=SCHEMA, title=f"{app.title} - Swagger UI",
                                   oauth2_redirect_url="/docs/oauth2-redirect",
                                   swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS}/favicon.png")

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()  # Swagger UI's own page: it holds nothing of the API

    @app.get("/redoc", include_in_schema=False, dependencies=[Depends(page_reader)])
    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=SCHEMA, title=f"{app.title} - ReDoc",
                              redoc_js_url=f"{ASSETS}/redoc.standalone.js", with_google_fonts=False,
                              redoc_favicon_url=f"{ASSETS}/favicon.png")
