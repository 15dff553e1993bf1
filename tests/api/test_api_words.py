"""The API answers in its own words (issue 31): query parameters and endpoints, not chat commands; no
claim of a conversation it did not attach; `restored_from` served; a too-long message refused with its
limit named and without its text echoed back."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack


async def test_a_refused_removal_names_the_query_parameter_not_the_chat_command(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("api-words-1", "work"))["result"]
    (Path(created["workingPath"]) / "draft.txt").write_text("unsaved\n")

    refused = await stack.api.delete(f"/api/environments/{created['environmentId']}")
    detail = refused.json()["detail"]
    assert refused.status_code == 409
    assert f"DELETE /api/environments/{created['environmentId']}?force=true" in detail, detail
    assert "`/worktree" not in detail, detail


async def test_an_api_restore_attaches_no_conversation_and_says_none(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("api-words-2", "work"))["result"]
    await stack.say("api-words-2", "/worktree remove")

    restored = await stack.api.post(f"/api/environments/{created['environmentId']}/restore")
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert "This conversation" not in body["message"], body["message"]
    view = (await stack.api.get(f"/api/environments/{body['environment_id']}")).json()
    assert view["restored_from"] == created["environmentId"]
    assert view["conversations"] == []
    old = (await stack.api.get(f"/api/environments/{created['environmentId']}")).json()
    assert old["restored_as"] == body["environment_id"] and old["restored_from"] is None


async def test_a_200_kb_message_gets_a_short_answer_naming_the_limit(stack: Stack) -> None:
    text = "x" * 200_000
    answer = await stack.api.post("/test/message", json={"conversationId": "api-words-3", "message": text})
    assert answer.status_code == 422
    assert len(answer.content) < 1000, f"{len(answer.content)} bytes came back"
    assert "65536" in answer.text and "xxxxxxxxxx" not in answer.text, answer.text
