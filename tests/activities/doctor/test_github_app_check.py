"""The doctor's GitHub App check against the fake GitHub (real PyGithub, the App's JWT checked with its public
key): right, a key that is not the App's, a permission missing, an event missing; one line each problem."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from activities.doctor.github import github_app
from activities.doctor.platforms import platform_checks
from isolator.settings import Settings
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_app import App, new_private_key


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    await fake.start()
    yield fake
    await fake.stop()


def as_app(settings: Settings, github: FakeGitHub, app: App, key: str | None = None) -> Settings:
    return settings.model_copy(update={"github_api_url": github.api_url, "github_token": None,
                                       "github_app_id": app.app_id,
                                       "github_app_private_key": SecretStr(key or app.private_key)})


async def test_an_app_with_all_it_needs_is_one_ok_line(settings: Settings, github: FakeGitHub) -> None:
    app = github.apps.add_app("isolator-doctor")
    (check,) = await github_app(as_app(settings, github, app))
    assert check.ok and check.line() == (f"OK    GitHub: the App {app.app_id} (GET /app with its JWT): "
                                         "isolator-doctor, acting as isolator-doctor[bot]")
    coroutines = platform_checks(as_app(settings, github, app))
    names = [coroutine.__qualname__ for coroutine in coroutines]
    for coroutine in coroutines:
        coroutine.close()
    assert "github_app" in names, "wired in the doctor's platforms"


async def test_a_key_that_is_not_the_apps_is_said_with_its_fix(settings: Settings, github: FakeGitHub) -> None:
    app = github.apps.add_app("isolator-doctor")
    (check,) = await github_app(as_app(settings, github, app, key=new_private_key()))
    assert not check.ok and "GitHub refuses the App's JWT (401)" in check.line()
    assert "set GITHUB_APP_PRIVATE_KEY_FILE" in check.fix
    (garbled,) = await github_app(as_app(settings, github, app, key="not a key"))
    assert not garbled.ok and "PEM private key" in garbled.fix


async def test_a_missing_permission_and_a_missing_event_are_a_line_each(settings: Settings,
                                                                         github: FakeGitHub) -> None:
    app = github.apps.add_app("isolator-doctor")
    del app.permissions["checks"]
    app.permissions["pull_requests"] = "read"
    app.events.remove("workflow_run")
    ok, *problems = await github_app(as_app(settings, github, app))
    assert ok.ok
    assert [check.line() for check in problems] == [
        "FAIL  GitHub: the App's permission pull_requests: the App lacks pull_requests: write. Fix: grant it in the "
        "App's settings (Permissions & events) on GitHub, then accept the change in each installation",
        "FAIL  GitHub: the App's permission checks: the App lacks checks: read. Fix: grant it in the App's settings "
        "(Permissions & events) on GitHub, then accept the change in each installation",
        "FAIL  GitHub: the App's event workflow_run: the App is not subscribed to workflow_run. Fix: tick it under "
        "Subscribe to events in the App's settings (Permissions & events) on GitHub, then accept the change in "
        "each installation",
    ]


async def test_without_an_app_there_is_no_app_line(settings: Settings) -> None:
    assert await github_app(settings.model_copy(update={"github_app_id": None, "isolator_secret_key": None})) == []
