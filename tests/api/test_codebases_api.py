"""`/api/codebases` and the input checks of `/test/message`, on real git, PostgreSQL and Temporal."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from tests.conftest import Stack
from tests.gitrepos import git, make_repo


async def post(stack: Stack, body: Any) -> httpx.Response:
    return await stack.api.post("/api/codebases", json=body)


def detail_text(response: httpx.Response) -> str:
    """The `detail` as one string: FastAPI gives a list of errors for a bad body, a string otherwise."""
    detail = response.json()["detail"]
    return detail if isinstance(detail, str) else "; ".join(item["msg"] for item in detail)


def workspace_entries(stack: Stack) -> list[str]:
    """Everything in the workspace, including hidden `.name.cloning` staging folders."""
    workspace = stack.settings.workspace_path
    return sorted(entry.name for entry in workspace.iterdir()) if workspace.exists() else []


async def codebase_count(stack: Stack) -> int:
    return await stack.db.fetchval("SELECT count(*) FROM codebases")


# --- registering ------------------------------------------------------------------------------------------


async def test_register_by_path_records_the_checkout_once(stack: Stack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repos" / "project", branch="trunk")
    git("remote", "add", "origin", "https://example.com/team/project.git/", cwd=repo)

    first = await post(stack, {"path": str(repo)})
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["created"] is True
    assert body["name"] == "project"
    assert body["canonical_path"] == str(repo.resolve())
    assert body["default_branch"] == "trunk", "the checked-out branch, not an assumed `main`"
    assert body["repository_url"] == "https://example.com/team/project", "no `.git`, no trailing slash"
    assert body["host"] == stack.settings.host

    again = await post(stack, {"path": str(repo) + "/"})
    assert again.status_code == 200, again.text
    assert again.json() == {**body, "created": False}
    assert await codebase_count(stack) == 1
    assert workspace_entries(stack) == [], "registering a checkout clones nothing"


async def test_a_worktree_registers_the_main_checkout_and_a_subfolder_is_refused(
        stack: Stack, repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "elsewhere" / "feature"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=repo)
    (repo / "src" / "deep").mkdir(parents=True)

    first = await post(stack, {"path": str(linked)})
    assert first.status_code == 201, first.text
    assert first.json()["canonical_path"] == str(repo.resolve())
    assert first.json()["name"] == "project"
    assert first.json()["default_branch"] == "main", "the main checkout's branch, not the worktree's"

    again = await post(stack, {"path": str(repo)})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"], again.text
    inside = await post(stack, {"path": str(repo / "src" / "deep")})
    assert inside.status_code == 422 and f"give the repository's root `{repo.resolve()}`" in inside.json()["detail"]
    assert await codebase_count(stack) == 1


async def test_register_by_url_clones_into_the_workspace(stack: Stack, tmp_path: Path) -> None:
    upstream = make_repo(tmp_path / "upstream" / "widget")
    url = upstream.as_uri()

    first = await post(stack, {"url": url})
    assert first.status_code == 201, first.text
    clone = stack.settings.workspace_path / "widget"
    assert first.json()["canonical_path"] == str(clone.resolve())
    assert first.json()["repository_url"] == url
    assert first.json()["default_branch"] == "main"
    assert (clone / "file0.txt").read_text() == "content 0\n"
    assert workspace_entries(stack) == ["widget"], "no staging folder left behind"

    again = await post(stack, {"url": url + "/"})
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first.json()["id"]
    assert await codebase_count(stack) == 1


async def test_register_by_path_and_url_records_the_url_without_cloning(stack: Stack, repo: Path) -> None:
    response = await post(stack, {"path": str(repo), "url": "git@example.com:team/project.git", "name": "proj"})
    assert response.status_code == 201, response.text
    assert response.json()["repository_url"] == "git@example.com:team/project"
    assert response.json()["canonical_path"] == str(repo.resolve())
    assert response.json()["name"] == "proj"
    assert workspace_entries(stack) == []


async def test_list_is_sorted_by_name(stack: Stack, tmp_path: Path) -> None:
    for name in ("zeta", "alpha", "mid"):
        await stack.register(make_repo(tmp_path / "repos" / name))
    response = await stack.api.get("/api/codebases")
    assert response.status_code == 200
    listed = response.json()
    assert [item["name"] for item in listed] == ["alpha", "mid", "zeta"]
    assert listed[0]["canonical_path"] == str((tmp_path / "repos" / "alpha").resolve())
    assert set(listed[0]) == {"id", "name", "repository_url", "canonical_path", "default_branch", "host", "agent_command",
                              "agent", "checkout_state", "checkout_note"}


# --- refusing ---------------------------------------------------------------------------------------------


def _file(tmp: Path) -> str:
    (tmp / "notes.txt").write_text("not a directory\n")
    return str(tmp / "notes.txt")


def _plain_dir(tmp: Path) -> str:
    (tmp / "plain").mkdir()
    return str(tmp / "plain")


def _empty_repo(tmp: Path) -> str:
    (tmp / "empty").mkdir()
    git("init", "-q", cwd=tmp / "empty")
    return str(tmp / "empty")


def _bare_repo(tmp: Path) -> str:
    git("init", "-q", "--bare", str(tmp / "bare.git"), cwd=tmp)
    return str(tmp / "bare.git")


def _repo(tmp: Path, name: str = "good") -> str:
    return str(make_repo(tmp / name))


BAD_INPUT: dict[str, tuple[Callable[[Path], Any], str]] = {
    "nothing": (lambda tmp: {}, "give `path`"),
    "both null": (lambda tmp: {"path": None, "url": None}, "give `path`"),
    "not an object": (lambda tmp: ["/srv/repo"], "valid dictionary"),
    "path not a string": (lambda tmp: {"path": 123}, "valid string"),
    "url not a string": (lambda tmp: {"url": ["https://example.com/r"]}, "valid string"),
    "empty path": (lambda tmp: {"path": ""}, "at least 1 character"),
    "relative path": (lambda tmp: {"path": "repos/project"}, "must be absolute"),
    "control character": (lambda tmp: {"path": "/srv/re\x01po"}, "control characters"),
    "missing path": (lambda tmp: {"path": str(tmp / "missing")}, "is not a directory"),
    "file path": (lambda tmp: {"path": _file(tmp)}, "is not a directory"),
    "plain directory": (lambda tmp: {"path": _plain_dir(tmp)}, "is not a git repository"),
    "no commits": (lambda tmp: {"path": _empty_repo(tmp)}, "has no commits yet"),
    "bare repository": (lambda tmp: {"path": _bare_repo(tmp)}, "bare repository"),
    "unusable folder name": (lambda tmp: {"path": _repo(tmp, "my project")}, "not a usable codebase name"),
    "invalid name": (lambda tmp: {"path": _repo(tmp), "name": "../escape"}, "`name` may use"),
    "unknown field": (lambda tmp: {"path": _repo(tmp), "colour": "blue"}, "Extra inputs are not permitted"),
    "option as url": (lambda tmp: {"url": "--upload-pack=touch"}, "`url` must be"),
    "ext url": (lambda tmp: {"url": "ext::sh -c id"}, "`url` must be"),
    "uncloneable url": (lambda tmp: {"url": (tmp / "gone").as_uri()}, "Could not clone"),
    # The name comes from the URL and is refused before anything is cloned.
    "unusable url name": (lambda tmp: {"url": Path(_repo(tmp, ".hidden")).as_uri()}, "not a usable codebase name"),
}


@pytest.mark.parametrize("case", BAD_INPUT, ids=list(BAD_INPUT))
async def test_bad_input_is_refused_and_leaves_nothing_behind(stack: Stack, tmp_path: Path, case: str) -> None:
    build, expected = BAD_INPUT[case]
    (tmp_path / "input").mkdir()
    response = await post(stack, build(tmp_path / "input"))
    assert response.status_code == 422, response.text
    assert expected in detail_text(response)
    assert await codebase_count(stack) == 0
    assert workspace_entries(stack) == []


async def test_a_checkout_inside_the_worktree_base_is_refused(stack: Stack) -> None:
    inside = make_repo(stack.settings.worktree_base / "project" / "branch")
    response = await post(stack, {"path": str(inside)})
    assert response.status_code == 422, response.text
    assert "inside the worktree base" in detail_text(response)
    assert await codebase_count(stack) == 0


async def test_another_repository_under_a_taken_name_is_a_conflict(stack: Stack, tmp_path: Path) -> None:
    first = await stack.register(make_repo(tmp_path / "a" / "shared"))
    other = make_repo(tmp_path / "b" / "shared")

    response = await post(stack, {"path": str(other)})
    assert response.status_code == 409, response.text
    assert "already registered as `shared`" in detail_text(response)
    # Cloning another repository under that name is refused too, and its clone is not kept.
    response = await post(stack, {"url": other.as_uri()})
    assert response.status_code == 409, response.text
    assert workspace_entries(stack) == []
    rows = await stack.db.fetch("SELECT id FROM codebases")
    assert [str(row["id"]) for row in rows] == [first["id"]]


async def test_a_workspace_folder_that_is_not_the_clone_is_a_conflict(stack: Stack, tmp_path: Path) -> None:
    occupied = stack.settings.workspace_path / "widget"
    occupied.mkdir(parents=True)
    (occupied / "keep.txt").write_text("someone's files\n")

    response = await post(stack, {"url": make_repo(tmp_path / "upstream" / "widget").as_uri()})
    assert response.status_code == 409, response.text
    assert "already exists and is not a clone" in detail_text(response)
    assert sorted(p.name for p in occupied.iterdir()) == ["keep.txt"], "the folder is left untouched"
    assert workspace_entries(stack) == ["widget"]
    assert await codebase_count(stack) == 0


# --- the API token ----------------------------------------------------------------------------------------


async def test_api_token_is_required_when_configured(stack: Stack, repo: Path) -> None:
    settings = stack.settings.model_copy(update={"api_token": SecretStr("s3cret-token")})
    app = create_app(settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret-token"}):
            listed = await api.get("/api/codebases", headers=headers)
            assert listed.status_code == 401, headers
            assert "API token" in listed.json()["detail"]
            assert listed.headers["www-authenticate"] == "Bearer"
            refused = await api.post("/api/codebases", headers=headers, json={"path": str(repo)})
            assert refused.status_code == 401, headers
        assert await codebase_count(stack) == 0

        good = {"Authorization": "Bearer s3cret-token"}
        created = await api.post("/api/codebases", headers=good, json={"path": str(repo)})
        assert created.status_code == 201, created.text
        assert [item["name"] for item in (await api.get("/api/codebases", headers=good)).json()] == ["project"]
        assert (await api.get("/healthz")).status_code == 200, "health checks need no token"


# --- /test/message input ----------------------------------------------------------------------------------

BAD_MESSAGES = {
    "empty body": {},
    "no conversation": {"message": "hello"},
    "no message": {"conversationId": "c-1"},
    "numeric conversation": {"conversationId": 7, "message": "hello"},
    "list message": {"conversationId": "c-1", "message": ["hello"]},
    "null message": {"conversationId": "c-1", "message": None},
    "empty conversation": {"conversationId": "", "message": "hello"},
    "empty message": {"conversationId": "c-1", "message": ""},
    "control character": {"conversationId": "c\n1", "message": "hello"},
    "bad message id": {"conversationId": "c-1", "message": "hello", "messageId": "a b"},
    "unknown field": {"conversationId": "c-1", "message": "hello", "channel": "x"},
}


@pytest.mark.parametrize("body", BAD_MESSAGES.values(), ids=list(BAD_MESSAGES))
async def test_bad_test_messages_are_refused_and_record_nothing(stack: Stack, body: dict) -> None:
    response = await stack.api.post("/test/message", params={"wait": "true"}, json=body)
    assert response.status_code == 422, response.text
    assert detail_text(response)
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0
    assert await stack.db.fetchval("SELECT count(*) FROM outbound_messages") == 0


async def test_a_host_no_worker_serves_is_refused_with_a_reason(stack: Stack, repo: Path) -> None:
    """A registration's git work waits for the host's worker; a host with none is refused, not waited for."""
    response = await stack.api.post("/api/codebases", json={"path": str(repo), "host": "nowhere"})
    assert response.status_code == 422, response.text
    assert "ISOLATOR_HOST=nowhere" in response.json()["detail"]
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
