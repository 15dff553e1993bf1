"""CLONE_ALLOWED_ROOTS: chat may register checkouts under those folders, and nothing a path there
leads to elsewhere (a link, `..`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram
from tests.gitrepos import make_repo
from tests.trust.telegram.test_clone_from_chat import say


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"clone_allowed_roots": frozenset({str(tmp_path / "repos")})})


async def test_a_checkout_under_the_roots_is_registered_and_nothing_outside(
    stack: Stack, fake: FakeTelegram, repo: Path, tmp_path: Path
) -> None:
    outside = make_repo(tmp_path / "private" / "secret")
    (tmp_path / "repos" / "link").symlink_to(outside)

    assert "outside `CLONE_ALLOWED_ROOTS`" in await say(stack, fake, f"/clone {tmp_path / 'repos' / 'link'}")
    assert "only takes local paths under" in await say(stack, fake, f"/clone {outside}")
    assert "with `..` is refused" in await say(stack, fake, f"/clone {tmp_path / 'repos'}/../private/secret")
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0

    assert "Registered repository `project`" in await say(stack, fake, f"/clone {repo}")
    assert await stack.db.fetchval("SELECT canonical_path FROM codebases") == str(repo)
