"""GitHub's check: who the token (or, soon, the App) is."""

from __future__ import annotations

import asyncio

from github import Auth, BadCredentialsException, Github, GithubException

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
