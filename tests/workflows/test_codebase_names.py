"""A codebase's name and how a conversation chooses one (issue 31): a local checkout is named after its
folder unless its remote is a hosted repository, its recorded URL is a place that exists, and
`/clone <name>` chooses a registered codebase by the name the replies list."""

from __future__ import annotations

from pathlib import Path

from tests.chat_commands import say_one
from tests.conftest import Stack
from tests.gitrepos import clone_with_origin, git, make_repo


async def test_a_checkout_whose_remote_is_a_local_folder_is_named_after_its_own_folder(
        stack: Stack, tmp_path: Path) -> None:
    origin, checkout = clone_with_origin(tmp_path / "calc")  # origin: `.../origin.git`
    registered = await stack.register(checkout)
    assert registered["name"] == "project", registered
    assert registered["repository_url"] == str(origin.resolve())
    assert Path(registered["repository_url"]).is_dir(), "the recorded URL names a place that exists"


async def test_a_relative_local_remote_is_recorded_as_the_folder_it_names(stack: Stack, tmp_path: Path) -> None:
    checkout = make_repo(tmp_path / "repos" / "webapp")
    git("clone", "-q", "--bare", str(checkout), str(tmp_path / "repos" / "webapp-origin.git"), cwd=tmp_path)
    git("remote", "add", "origin", "../webapp-origin.git", cwd=checkout)

    answer = await say_one(stack, "names-clone", f"/clone {checkout}")
    assert answer.startswith("Registered repository `webapp`"), answer
    url = await stack.db.fetchval("SELECT repository_url FROM codebases")
    assert url == str((tmp_path / "repos" / "webapp-origin.git").resolve())


async def test_a_hosted_remote_still_names_the_codebase(stack: Stack, tmp_path: Path) -> None:
    checkout = make_repo(tmp_path / "repos" / "local-folder")
    git("remote", "add", "origin", "git@example.com:team/widget.git", cwd=checkout)
    registered = await stack.register(checkout)
    assert (registered["name"], registered["repository_url"]) == ("widget", "git@example.com:team/widget")


async def test_clone_by_name_chooses_a_registered_codebase(stack: Stack, tmp_path: Path) -> None:
    await stack.register(make_repo(tmp_path / "repos" / "calc"))
    await stack.register(make_repo(tmp_path / "repos" / "webapp"))

    asked = (await stack.say("names-choose", "hello"))["result"]
    assert asked["outcome"] == "no_codebase"
    assert "`calc`, `webapp`" in asked["replies"][0] and "`/clone calc`" in asked["replies"][0], asked

    unknown = await say_one(stack, "names-choose", "/clone nope")
    assert unknown.startswith("No repository is registered as `nope`. Registered: `calc`, `webapp`."), unknown

    chosen = await say_one(stack, "names-choose", "/clone webapp")
    assert chosen == (f"Repository `webapp` is already registered (at `{(tmp_path / 'repos' / 'webapp').resolve()}`). "
                      "This conversation now works in it.")
    worked = (await stack.say("names-choose", "hello again"))["result"]
    assert worked["outcome"] == "created" and "/webapp/" in worked["workingPath"], worked
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 2, "nothing registered twice"
