"""The GitHub App's side of the fake GitHub (tests/fakes/github_api.py), as GitHub documents it.

- `GET /app` with the App's JWT: its slug, permissions and events. The JWT must be RS256, signed with
  the App's private key (checked with its public key), `iss` the App's id, and unexpired (`exp` at most
  ten minutes ahead); anything else is 401, as GitHub answers.
- `POST /app/installations/{id}/access_tokens` with the JWT: a token for the installation with its
  `expires_at` (an hour by `clock`); each request is counted (`token_requests`). The fake GitHub takes
  such a token as it takes a personal one, until it expires (then 401 Bad credentials).
- `GET /repos/{o}/{r}/installation` with the JWT: the installation that holds the repository.
- The manifest flow: `POST /settings/apps/new` (or an organization's) takes the form field `manifest`,
  makes an App of it and redirects to its `redirect_url` with a one-time `code` and the `state`;
  `POST /app-manifests/{code}/conversions` (no authentication) gives the App's id, slug, key and secrets.
"""

from __future__ import annotations

import itertools
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.responses import RedirectResponse, Response

from tests.fakes.recording_server import Recorded

if TYPE_CHECKING:
    from tests.fakes.github_api import FakeGitHub

_DOCS = "https://docs.github.com/rest"
ALL_PERMISSIONS = {"contents": "write", "issues": "write", "pull_requests": "write", "checks": "read",
                   "actions": "read", "statuses": "read", "metadata": "read"}
ALL_EVENTS = ["issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment",
              "check_suite", "workflow_run", "push"]
_ids = itertools.count(100_000 + secrets.randbelow(10**6))


def new_private_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@dataclass
class App:
    app_id: int
    slug: str
    private_key: str
    permissions: dict[str, str] = field(default_factory=lambda: dict(ALL_PERMISSIONS))
    events: list[str] = field(default_factory=lambda: list(ALL_EVENTS))
    webhook_secret: str = ""
    installations: dict[int, list[str]] = field(default_factory=dict)  # id -> repositories (owner/name)

    @property
    def public_key(self) -> Any:
        return serialization.load_pem_private_key(self.private_key.encode(), None).public_key()


class FakeGitHubApps:
    """The Apps GitHub knows, their tokens, and the manifest flow's codes."""

    def __init__(self, github: FakeGitHub, clock: Callable[[], float] = time.time) -> None:
        self.github, self.clock = github, clock
        self.apps: dict[int, App] = {}
        self.tokens: dict[str, tuple[int, float]] = {}  # token -> installation, expiry
        self.token_requests: dict[int, int] = {}  # per installation
        self.token_lifetime = 3600.0
        self.manifests: list[dict[str, Any]] = []  # as posted to the "new App" page
        self._codes: dict[str, App] = {}
        server = github.server
        server.route("GET", r"/app", self._get_app)
        server.route("POST", r"/app/installations/(?P<installation>\d+)/access_tokens", self._access_token)
        server.route("GET", r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)/installation", self._repo_installation)
        server.route("POST", r"(?:/organizations/(?P<org>[^/]+))?/settings/apps/new", self._new_app)
        server.route("POST", r"/app-manifests/(?P<code>[^/]+)/conversions", self._conversion)

    def add_app(self, slug: str = "isolator-test", private_key: str | None = None) -> App:
        app = App(next(_ids), slug, private_key or new_private_key(), webhook_secret=secrets.token_hex(16))
        self.apps[app.app_id] = app
        return app

    def install(self, app: App, *repositories: str) -> int:
        installation = next(_ids)
        app.installations[installation] = list(repositories)
        return installation

    def expire_tokens(self) -> None:
        """Every token given so far expires now (while the service still believes it good)."""
        self.tokens = {token: (installation, self.clock() - 1) for token, (installation, _) in self.tokens.items()}

    def requests_for(self, installation: int) -> int:
        return self.token_requests.get(installation, 0)

    def token_is_valid(self, token: str) -> bool:
        held = self.tokens.get(token)
        return held is not None and held[1] > self.clock()

    def installation_of_token(self, token: str) -> int | None:
        held = self.tokens.get(token)
        return held[0] if held else None

    # --- answering -------------------------------------------------------------------------

    def _app_of_jwt(self, request: Recorded) -> App | tuple[int, Any]:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        refused = (401, {"message": "A JSON web token could not be decoded", "documentation_url": _DOCS})
        if scheme.lower() != "bearer" or not given:
            return refused
        try:
            claimed = jwt.decode(given, options={"verify_signature": False})
            app = self.apps.get(int(claimed.get("iss", 0)))
            if app is None:
                return 401, {"message": "'Issuer' claim ('iss') must be an Integer", "documentation_url": _DOCS}
            checked = jwt.decode(given, app.public_key, algorithms=["RS256"], options={"require": ["exp", "iat", "iss"]},
                                 leeway=60)
        except (jwt.InvalidTokenError, ValueError):
            return refused
        if checked["exp"] - time.time() > 660:
            return 401, {"message": "'Expiration time' claim ('exp') is too far in the future", "documentation_url": _DOCS}
        return app

    def _get_app(self, request: Recorded) -> tuple[int, Any]:
        app = self._app_of_jwt(request)
        if not isinstance(app, App):
            return app
        return 200, {"id": app.app_id, "slug": app.slug, "node_id": f"A_{app.app_id}", "name": app.slug,
                     "owner": {"login": "octo-org", "id": 3, "type": "Organization"}, "description": "",
                     "external_url": "", "html_url": f"https://github.com/apps/{app.slug}",
                     "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
                     "permissions": app.permissions, "events": app.events, "installations_count": len(app.installations)}

    def _access_token(self, request: Recorded) -> tuple[int, Any]:
        app = self._app_of_jwt(request)
        if not isinstance(app, App):
            return app
        installation = int(request.params["installation"])
        if installation not in app.installations:
            return 404, {"message": "Not Found", "documentation_url": _DOCS}
        self.token_requests[installation] = self.token_requests.get(installation, 0) + 1
        token = "ghs_" + secrets.token_hex(18)
        expires = self.clock() + self.token_lifetime
        self.tokens[token] = (installation, expires)
        return 201, {"token": token, "expires_at": _iso(expires), "permissions": app.permissions,
                     "repository_selection": "selected"}

    def _repo_installation(self, request: Recorded) -> tuple[int, Any]:
        app = self._app_of_jwt(request)
        if not isinstance(app, App):
            return app
        wanted = f"{request.params['owner']}/{request.params['name']}".lower()
        for installation, repositories in app.installations.items():
            if wanted in (name.lower() for name in repositories):
                return 200, {"id": installation, "app_id": app.app_id, "app_slug": app.slug, "target_type": "Organization",
                             "account": {"login": request.params["owner"], "id": 3, "type": "Organization"},
                             "permissions": app.permissions, "events": app.events, "repository_selection": "selected"}
        return 404, {"message": "Not Found", "documentation_url": _DOCS}

    def _new_app(self, request: Recorded) -> Response | tuple[int, Any]:
        form = request.form()
        try:
            manifest = json.loads(form["manifest"])
            redirect = manifest["redirect_url"]
        except (KeyError, ValueError):
            return 422, {"message": "Invalid manifest", "documentation_url": _DOCS}
        self.manifests.append(manifest)
        app = self.add_app(slug=str(manifest.get("name", "app")).lower())
        app.permissions = dict(manifest.get("default_permissions") or {})
        app.events = list(manifest.get("default_events") or [])
        code = secrets.token_hex(10)
        self._codes[code] = app
        state = request.query.get("state", [""])[0]
        return RedirectResponse(f"{redirect}?{urlencode({'code': code, 'state': state})}", status_code=302)

    def _conversion(self, request: Recorded) -> tuple[int, Any]:
        app = self._codes.pop(request.params["code"], None)  # a code is good once
        if app is None:
            return 404, {"message": "Not Found", "documentation_url": _DOCS}
        return 201, {"id": app.app_id, "slug": app.slug, "node_id": f"A_{app.app_id}", "name": app.slug,
                     "html_url": f"https://github.com/apps/{app.slug}", "pem": app.private_key,
                     "webhook_secret": app.webhook_secret, "client_id": f"Iv1.{app.app_id}",
                     "client_secret": secrets.token_hex(20), "permissions": app.permissions, "events": app.events,
                     "owner": {"login": "octo-org", "id": 3, "type": "Organization"}}


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
