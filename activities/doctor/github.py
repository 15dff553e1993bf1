"""GitHub's checks: who the token is (GET /user), and the App (GET /app with its JWT): its key, and its
permissions and events against what the service needs, one line each problem with its fix."""

from __future__ import annotations

import asyncio

import asyncpg
import jwt
from github import Auth, BadCredentialsException, Github, GithubException, GithubIntegration

from activities.chat.platforms.github_app.manifest import missing_events, missing_permissions
from activities.chat.platforms.github_app.stored import GitHubApp, SecretKeyError, load_app
from activities.doctor.check import TIMEOUT_SECONDS, Check
from isolator.settings import Settings


async def github_token(settings: Settings) -> Check:
    name = "GitHub: GITHUB_TOKEN (GET /user)"
    token = settings.github_token.get_secret_value()  # type: ignore[union-attr]

    def who() -> str:
        # retry=None: the doctor says what GitHub answered now, rather than waiting through retries.
        with Github(base_url=settings.github_api_url, auth=Auth.Token(token), timeout=TIMEOUT_SECONDS,
                    retry=None) as github:
            return github.get_user().login

    try:
        return Check.passed(name, f"the token is {await asyncio.to_thread(who)}'s")
    except BadCredentialsException:
        return Check.failed(name, "GitHub refuses the token (401 Bad credentials)",
                            "make a new token (Settings, Developer settings) and set GITHUB_TOKEN to it")
    except GithubException as error:
        return Check.failed(name, f"GitHub answered {error.status}",
                            "give the token the repositories' Issues, Pull requests and Contents permissions")
    except OSError as error:
        return Check.failed(name, f"GitHub cannot be reached ({type(error).__name__})",
                            "check GITHUB_API_URL and this machine's network")


async def github_app(settings: Settings) -> list[Check]:
    """The App of GITHUB_APP_ID, else the one the dashboard stored; no line when there is neither."""
    name = "GitHub: the App (GET /app with its JWT)"
    try:
        app = await _the_app(settings)
    except SecretKeyError as error:
        return [Check.failed(name, str(error).split(":")[0], "set ISOLATOR_SECRET_KEY to the key the App was stored "
                                                             "with, or connect the App again (/connect/github)")]
    except (OSError, asyncpg.PostgresError) as error:
        return [Check.failed(name, f"the stored App cannot be read ({type(error).__name__})",
                             "check DATABASE_URL (isolator doctor's PostgreSQL line says more)")]
    if app is None:
        return []
    name = f"GitHub: the App {app.app_id} (GET /app with its JWT)"

    def read() -> tuple[str, dict[str, str], list[str]]:
        with GithubIntegration(auth=Auth.AppAuth(app.app_id, app.private_key), base_url=settings.github_api_url,
                               timeout=TIMEOUT_SECONDS, retry=None) as integration:
            answer = integration.get_app()
            return answer.slug, dict(answer.permissions or {}), list(answer.events or [])

    try:
        slug, permissions, events = await asyncio.to_thread(read)
    except GithubException as error:
        if error.status == 401:
            return [Check.failed(name, "GitHub refuses the App's JWT (401): the private key is not this App's, or "
                                       "the App id is wrong", "generate a private key on the App's settings page and "
                                       "set GITHUB_APP_PRIVATE_KEY_FILE to it (or connect the App again from the "
                                       "dashboard), with GITHUB_APP_ID the App's id")]
        return [Check.failed(name, f"GitHub answered {error.status}", "check GITHUB_APP_ID and GITHUB_API_URL")]
    except (OSError, ValueError, jwt.PyJWTError) as error:  # the latter two: a key that is no PEM
        return [Check.failed(name, f"the App's JWT cannot be made or sent ({type(error).__name__})",
                             "set GITHUB_APP_PRIVATE_KEY(_FILE) to the App's PEM private key, and check GITHUB_API_URL")]
    checks = [Check.passed(name, f"{slug}, acting as {slug}[bot]")]
    settings_page = "the App's settings (Permissions & events) on GitHub, then accept the change in each installation"
    checks += [Check.failed(f"GitHub: the App's permission {permission.split(':')[0]}",
                            f"the App lacks {permission}", f"grant it in {settings_page}")
               for permission in missing_permissions(permissions)]
    checks += [Check.failed(f"GitHub: the App's event {event}", f"the App is not subscribed to {event}",
                            f"tick it under Subscribe to events in {settings_page}")
               for event in missing_events(events)]
    return checks


async def _the_app(settings: Settings) -> GitHubApp | None:
    pem = settings.github_app_key_pem
    if settings.github_app_id is not None and pem is not None:
        return GitHubApp(settings.github_app_id, pem, None, None, "environment")
    if settings.isolator_secret_key is None or settings.database_url is None:
        return None
    connection = await asyncpg.connect(settings.database_url, timeout=TIMEOUT_SECONDS)
    try:
        return await load_app(connection, settings.isolator_secret_key.get_secret_value())
    except asyncpg.UndefinedTableError:
        return None
    finally:
        await connection.close()
