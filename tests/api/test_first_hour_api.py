"""What a newcomer meets first over HTTP (issue "First hour"): a blank message is refused as an empty one
is, on the test adapter and the platforms; a codebase is found by its id too; a conversation id with `/`
is read back; a refused request says what to send. Real PostgreSQL and Temporal through the API."""

from __future__ import annotations

import time
from pathlib import Path

from api.platforms.slack.events import parse_message
from api.platforms.telegram.webhook import parse_update, read_message
from tests.conftest import Stack
from tests.platforms.telegram import GROUP, PRIVATE, message

BOT = "U0BOT"


async def test_a_blank_message_is_refused_as_an_empty_one_is(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    for text in ("", "   ", "\n\t "):
        refused = await stack.api.post("/test/message", params={"wait": "true"},
                                       json={"conversationId": "blank-1", "message": text})
        assert refused.status_code == 422, (text, refused.text)
    blank = refused.json()["detail"][0]
    assert blank["loc"] == ["body", "message"] and "must not be blank" in blank["msg"], blank
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0


def test_a_blank_or_bare_mention_from_a_platform_starts_nothing() -> None:
    event = {"channel": "C1", "ts": "1.000001", "user": "U1"}
    assert parse_message({**event, "text": "   "}, BOT) is None
    assert parse_message({**event, "text": f"<@{BOT}>  "}, BOT) is None
    assert parse_message({**event, "text": f"<@{BOT}> hi"}, BOT) is not None

    def read(text: str, chat: dict = PRIVATE) -> object:
        return read_message(parse_update({"update_id": int(time.time()), "message": message(text, chat)}), "isolator")

    assert read("   ") == "the message has no text"
    assert read("@isolator  ", GROUP) == "the message is only a mention of the bot"
    assert not isinstance(read("@isolator go", GROUP), str)


async def test_environments_are_listed_by_codebase_id_and_an_unknown_codebase_is_a_404(
        stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    created = (await stack.say("by-id-1", "work"))["result"]

    by_id = await stack.api.get("/api/environments", params={"codebase": codebase["id"]})
    by_name = await stack.api.get("/api/environments", params={"codebase": "project"})
    unknown = await stack.api.get("/api/environments", params={"codebase": "nope"})

    assert [item["id"] for item in by_id.json()] == [created["environmentId"]]
    assert [item["id"] for item in by_name.json()] == [created["environmentId"]]  # its set-up may move on between
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == ("no codebase `nope`: pass a codebase's name or id, "
                                        "as `GET /api/codebases` lists them")


async def test_a_conversation_id_with_a_slash_is_read_back_and_cleared(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    replies = (await stack.say("team/alpha", "/status"))["result"]["replies"]

    read = await stack.api.get("/test/messages/team/alpha")
    assert read.status_code == 200, read.text
    assert read.json()["conversationId"] == "team/alpha"
    assert [item["message"] for item in read.json()["messages"]] == replies
    assert (await stack.api.delete("/test/messages/team/alpha")).json()["cleared"] is True
    assert await stack.replies("team/alpha") == []


async def test_a_refused_request_says_what_to_send(stack: Stack) -> None:
    not_an_object = await stack.api.post("/test/message", json=["hello"])
    missing = await stack.api.post("/api/codebases", json={"name": 7})
    bad_status = await stack.api.get("/api/environments", params={"status": "sleeping"})
    bad_id = await stack.api.get("/api/environments/not-a-uuid")

    assert not_an_object.status_code == 422
    (problem,) = not_an_object.json()["detail"]
    assert problem["hint"] == "send a JSON object with `conversationId`, `message` (and optionally `messageId`, `user`)", problem
    assert all(item["hint"].startswith("send a JSON object with") for item in missing.json()["detail"]), missing.text
    assert bad_status.json()["detail"][0]["hint"] == (
        "`status` in the query string: one of `active`, `hibernated`, `destroyed`")
    assert bad_id.json()["detail"][0]["hint"] == "`environment_id` in the path: an id (a UUID)"
