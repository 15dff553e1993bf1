"""`/clone` from a chat platform takes URLs on CLONE_ALLOWED_HOSTS only (github.com unless set) and
local paths only under CLONE_ALLOWED_ROOTS (none unless set); each refusal says why and registers nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram
from tests.platforms.telegram import message, resolution, send


async def say(stack: Stack, fake: FakeTelegram, text: str) -> str:
    """The reply to one private message."""
    before = len(fake.sent)
    answer = await resolution(stack, await send(stack, message=message(text)))
    assert answer.outcome == "command" and len(fake.sent) == before + 1, answer
    return fake.sent[-1].text


async def test_local_paths_relative_paths_and_other_hosts_are_refused_with_the_reason(
    stack: Stack, fake: FakeTelegram, repo: Path
) -> None:
    local = await say(stack, fake, f"/clone {repo}")
    relative = await say(stack, fake, "/clone ./project")
    parent = await say(stack, fake, "/clone ../project")
    other_host = await say(stack, fake, "/clone https://gitlab.example.com/octo-org/hello-world.git")
    scp_like = await say(stack, fake, "/clone git@gitlab.example.com:octo-org/hello-world.git")
    file_url = await say(stack, fake, f"/clone file://{repo}")

    assert "takes no local path here (`CLONE_ALLOWED_ROOTS` is not set)" in local
    assert "a relative path is refused" in relative and "a relative path is refused" in parent
    for reply in (other_host, scp_like):
        assert "`CLONE_ALLOWED_HOSTS` (here: `github.com`)" in reply and "`gitlab.example.com` is not one" in reply
    assert "a `file://` URL is a local path" in file_url
    assert all(reply.startswith("Could not register") for reply in (local, relative, other_host, file_url))
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
    workspace = stack.settings.workspace_path
    assert not workspace.exists() or list(workspace.iterdir()) == []


async def test_a_url_git_reads_otherwise_is_refused_with_what_git_would_do(stack: Stack, fake: FakeTelegram) -> None:
    red_team = await say(stack, fake, "/clone evil.example:x@github.com:o/r")
    no_user = await say(stack, fake, "/clone github.com:octo-org/hello-world")
    helper = await say(stack, fake, "/clone ext::sh")

    assert red_team.startswith("Could not register") and "git would connect to `evil.example`" in red_team
    assert "`evil.example` is not one of them" in red_team, "the reason, not only the usage"
    assert "write `https://github.com/owner/repo` or `user@github.com:owner/repo`" in no_user
    assert "git would not read one plain host from it" in helper
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
