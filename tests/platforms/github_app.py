"""GitHub as a GitHub App in the tests: an App of the fake GitHub installed on the tests' repository, and
settings that act as it (its id and key, no GITHUB_TOKEN)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_app import App
from tests.platforms.github import REPO

SLUG = "isolator-test"


@pytest.fixture
def github_app(fake: FakeGitHub) -> App:
    return fake.apps.add_app(SLUG)


@pytest.fixture
def installation(fake: FakeGitHub, github_app: App) -> int:
    return fake.apps.install(github_app, REPO)


def acting_as(settings: Settings, app: App) -> Settings:
    return settings.model_copy(update={"github_token": None, "github_app_id": app.app_id,
                                       "github_app_private_key": SecretStr(app.private_key)})


def installed(payload: dict[str, Any], installation: int) -> dict[str, Any]:
    """The payload as an installed App's webhook carries it."""
    return {**payload, "installation": {"id": installation, "node_id": f"MDIz{installation}"}}
