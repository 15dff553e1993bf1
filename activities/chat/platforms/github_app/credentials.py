"""The one place that says with what the service acts on GitHub: the App of the environment
(GITHUB_APP_ID and its key), else the App the dashboard stored, else GITHUB_TOKEN, else nothing.

As the App, a repository's calls and pushes use its installation's token. Tokens are kept per
installation and renewed in the background once less than RENEW_AHEAD_SECONDS of their hour is left,
so a message never waits for one (only the first of an installation, or one past its expiry, is asked
for on the way). A token GitHub refuses (401) is dropped and asked for again once (`renew`).

One provider per configuration and process (`credentials_of`): the cache is shared by every activity
and thread of it; PyGithub's calls run in threads, so the cache is guarded by a threading lock.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Literal

import asyncpg
from github import Auth, GithubException, GithubIntegration

from activities.chat.platforms.github_app.installations import installation_of, record_installation
from activities.chat.platforms.github_app.stored import GitHubApp, SecretKeyError, load_app
from isolator.settings import Settings

log = logging.getLogger(__name__)

RENEW_AHEAD_SECONDS = 300  # a token with less left than this is renewed in the background
MUST_RENEW_SECONDS = 60  # ... and with less than this, before it is used
STORED_APP_SECONDS = 10.0  # how long the stored App (or its absence) is believed before it is read again
_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Access:  # what one call authenticates with
    auth: Auth.Auth | None
    kind: Literal["app", "token", "none"]
    installation: int | None = None  # the installation whose token `auth` is
    token: str | None = None


class NotInstalled(Exception):
    """The App is not installed on the repository, and there is no GITHUB_TOKEN to fall back on."""


class GitHubCredentials:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.clock = clock
        self.token_requests = 0  # installation tokens asked of GitHub, for the benchmark and the tests
        self._lock = threading.Lock()
        self._tokens: dict[tuple[int, int], tuple[str, float]] = {}  # (app, installation) -> token, expiry
        self._renewing: set[tuple[int, int]] = set()
        self._installations: dict[str, int] = {}  # lower-cased owner/name -> installation
        self._slugs: dict[int, str] = {}
        self._stored: tuple[float, GitHubApp | None] | None = None
        self._last_refresh = 0.0
        self._environment_app = self._from_environment()

    # --- which App ---------------------------------------------------------------------------

    def _from_environment(self) -> GitHubApp | None:
        pem = self.settings.github_app_key_pem
        if self.settings.github_app_id is None or pem is None:
            return None
        secret = self.settings.github_webhook_secret
        return GitHubApp(self.settings.github_app_id, pem, None, secret.get_secret_value() if secret else None,
                         "environment")

    async def app(self, refresh: bool = False) -> GitHubApp | None:
        """The App the service acts as; None: GITHUB_TOKEN (or nothing)."""
        if self._environment_app is not None:
            return self._environment_app
        now = time.monotonic()
        if not refresh and self._stored is not None and now - self._stored[0] < STORED_APP_SECONDS:
            return self._stored[1]
        stored = await self._read_stored()
        self._stored = (now, stored)
        return stored

    async def _read_stored(self) -> GitHubApp | None:
        if self.settings.database_url is None or self.settings.isolator_secret_key is None:
            return None
        try:
            connection = await asyncpg.connect(self.settings.database_url)
        except (OSError, asyncpg.PostgresError) as error:
            log.warning("the stored GitHub App could not be read: %s", error)
            return self._stored[1] if self._stored else None
        try:
            return await load_app(connection, self.settings.isolator_secret_key.get_secret_value())
        except SecretKeyError as error:
            log.warning("%s", error)
            return None
        except asyncpg.UndefinedTableError:  # migrations not applied yet
            return None
        finally:
            await connection.close()

    def may_refresh(self) -> bool:
        """A forced read of the stored App, at most once a second: bad signatures cannot flood PostgreSQL."""
        now = time.monotonic()
        if now - self._last_refresh < 1.0:
            return False
        self._last_refresh = now
        return True

    async def configured(self) -> bool:
        return self.settings.github_token is not None or await self.app() is not None

    # --- the App's own login -----------------------------------------------------------------

    async def bot_login(self) -> str | None:
        """`<slug>[bot]` of the App (GET /app, once); None when acting with a personal token."""
        app = await self.app()
        if app is None:
            return None
        slug = app.slug or self._slugs.get(app.app_id)
        if slug is None:
            slug = await asyncio.to_thread(self._slug, app)
            self._slugs[app.app_id] = slug
        return f"{slug}[bot]"

    async def mention(self) -> str:
        """How people call the bot: `@<slug>` as the App, BOT_MENTION otherwise."""
        try:
            login = await self.bot_login()
        except GithubException as error:  # asked again next time; meanwhile BOT_MENTION
            log.warning("GET /app failed, the bot's login is not known yet: %s", error)
            login = None
        return "@" + login.removesuffix("[bot]") if login else self.settings.bot_mention

    # --- installations and their tokens ------------------------------------------------------

    def note_installation(self, repository: str, installation: int) -> bool:
        """A webhook said which installation holds `repository`; True when that is news to this process."""
        key = repository.lower()
        if self._installations.get(key) == installation:
            return False
        self._installations[key] = installation
        return True

    def forget_installation(self, repository: str) -> None:
        self._installations.pop(repository.lower(), None)

    async def access(self, repository: str | None) -> Access:
        """The credentials of one call about `repository` (owner/name; None for a call about no repository)."""
        app = await self.app() if repository is not None else None
        if app is not None and repository is not None:
            installation = await self._installation(app, repository)
            if installation is not None:
                try:
                    token = await asyncio.to_thread(self._token, app, installation, None)
                except GithubException as error:
                    if error.status != 404:
                        raise
                    # An installation recorded once, gone since (uninstalled, or another App's): asked anew.
                    installation = await self._installation(app, repository, recorded=False)
                    if installation is None:
                        raise NotInstalled(f"the GitHub App is not installed on {repository}: install it "
                                           "on that repository") from None
                    token = await asyncio.to_thread(self._token, app, installation, None)
                return Access(Auth.Token(token), "app", installation, token)
        if self.settings.github_token is not None:
            token = self.settings.github_token.get_secret_value()
            return Access(Auth.Token(token), "token", token=token)
        if app is not None:
            raise NotInstalled(f"the GitHub App is not installed on {repository}: install it on that repository")
        return Access(None, "none")

    async def renew(self, access: Access, repository: str) -> Access:
        """`access`'s token was refused (expired early, or revoked): a new one, asked of GitHub now."""
        app = await self.app()
        if access.kind != "app" or app is None or access.installation is None:
            return access
        token = await asyncio.to_thread(self._token, app, access.installation, access.token)
        return replace(access, auth=Auth.Token(token), token=token)

    async def _installation(self, app: GitHubApp, repository: str, recorded: bool = True) -> int | None:
        """The installation that holds `repository`: as a webhook said (this process, else the database), or
        as GitHub says; `recorded=False` asks GitHub only."""
        key = repository.lower()
        if recorded and key in self._installations:
            return self._installations[key]
        found = await self._recorded_installation(repository) if recorded else None
        if found is None:  # no webhook said it yet: GitHub says it (GET /repos/{o}/{r}/installation)
            found = await asyncio.to_thread(self._asked_installation, app, repository)
            if found is not None and self.settings.database_url is not None:
                connection = await asyncpg.connect(self.settings.database_url)
                try:
                    await record_installation(connection, repository, found)
                finally:
                    await connection.close()
        if found is not None:
            self._installations[key] = found
        return found

    async def _recorded_installation(self, repository: str) -> int | None:
        if self.settings.database_url is None:
            return None
        connection = await asyncpg.connect(self.settings.database_url)
        try:
            return await installation_of(connection, repository)
        except asyncpg.UndefinedTableError:
            return None
        finally:
            await connection.close()

    def _slug(self, app: GitHubApp) -> str:
        with self._integration(app) as integration:
            return integration.get_app().slug

    def _asked_installation(self, app: GitHubApp, repository: str) -> int | None:
        owner, name = repository.split("/", 1)
        try:
            with self._integration(app) as integration:
                return integration.get_repo_installation(owner, name).id
        except GithubException as error:
            if error.status == 404:
                return None
            raise

    def _token(self, app: GitHubApp, installation: int, refused: str | None) -> str:
        """The installation's token: the kept one while it has time left (renewed in the background once it
        has little), else a new one; never `refused`."""
        key = (app.app_id, installation)
        with self._lock:
            kept = self._tokens.get(key)
            if kept is not None and kept[0] != refused:
                left = kept[1] - self.clock()
                if left > MUST_RENEW_SECONDS:
                    if left < RENEW_AHEAD_SECONDS and key not in self._renewing:
                        self._renewing.add(key)
                        threading.Thread(target=self._renew_quietly, args=(app, installation), daemon=True).start()
                    return kept[0]
            return self._ask_token(app, installation)

    def _renew_quietly(self, app: GitHubApp, installation: int) -> None:
        try:
            with self._lock:
                kept = self._tokens.get((app.app_id, installation))
                if kept is None or kept[1] - self.clock() < RENEW_AHEAD_SECONDS:  # not renewed meanwhile
                    self._ask_token(app, installation)
        except Exception as error:  # noqa: BLE001 - the kept token still works; the next use tries again
            log.warning("renewing the token of installation %s failed: %s", installation, error)
        finally:
            self._renewing.discard((app.app_id, installation))

    def _ask_token(self, app: GitHubApp, installation: int) -> str:
        """POST /app/installations/{id}/access_tokens, with the App's JWT (the caller holds the lock)."""
        self.token_requests += 1
        with self._integration(app) as integration:
            granted = integration.get_access_token(installation)
        self._tokens[(app.app_id, installation)] = (granted.token, granted.expires_at.timestamp())
        return granted.token

    def _integration(self, app: GitHubApp) -> GithubIntegration:
        return GithubIntegration(auth=Auth.AppAuth(app.app_id, app.private_key), base_url=self.settings.github_api_url,
                                 timeout=_TIMEOUT_SECONDS, retry=None, user_agent="isolator")


def banner_line(settings: Settings) -> str | None:
    """What the service acts as on GitHub, for a banner (no database at hand: the stored App is named as such)."""
    if settings.github_app_id is not None:
        both = "; GITHUB_TOKEN is set too, the App wins" if settings.github_token else ""
        return f"as the GitHub App {settings.github_app_id} (GITHUB_APP_ID{both})"
    if settings.github_token is not None:
        also = ", or the App connected at /connect/github if there is one" if settings.isolator_secret_key else ""
        return f"with GITHUB_TOKEN (a personal token{also})"
    if settings.isolator_secret_key is not None:
        return "as the App connected at /connect/github, once there is one"
    return None


async def git_token(settings: Settings, repository: str | None) -> str | None:
    """The token a fetch or push of `repository` gives git (through its own credential helper); None
    when there is none for it (the App not installed there and no GITHUB_TOKEN: git says what it refused)."""
    if repository is None:
        return None
    try:
        return (await credentials_of(settings).access(repository)).token
    except NotInstalled:
        return None


_providers: dict[tuple[object, ...], GitHubCredentials] = {}


def credentials_of(settings: Settings) -> GitHubCredentials:
    """This process's provider for this configuration."""
    secret = settings.github_app_private_key
    key = (settings.github_api_url, settings.github_app_id, secret.get_secret_value() if secret else None,
           settings.github_app_private_key_file, settings.github_token, settings.github_webhook_secret,
           settings.database_url, settings.isolator_secret_key, settings.bot_mention)
    provider = _providers.get(key)
    if provider is None:
        provider = _providers[key] = GitHubCredentials(settings)
    return provider
