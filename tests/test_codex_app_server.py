"""Codex's app-server protocol as the run speaks it (activities/runs/agents/codex_app_server.py), without a
process: each approval request answered from the rules, the turn started once the thread is there, the
conversation closed at the turn's end, exec's flags of AGENT_ARGS as settings, and its messages read as
`codex exec` events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from activities.runs.agents import codex
from activities.runs.agents.base import Turn
from activities.runs.agents.codex_app_server import AppServerRelay, app_server_args, exec_events
from activities.sandbox import bubblewrap
from isolator.approval_rules import parse_rules
from isolator.contracts.approvals import AllowedCalls, ToolCall

WORKTREE = "/w/thread-1"
RULES = parse_rules("ask: Bash(git push:*), Write(migrations/**); deny: Bash(rm -rf:*)")


def relay(allowed: AllowedCalls | None = None) -> AppServerRelay:
    return AppServerRelay(RULES, allowed or AllowedCalls(), WORKTREE)


def sent(relay: AppServerRelay) -> list[dict | None]:
    """What the relay would write to Codex next (None: standard input closed)."""
    lines = []
    while not relay._lines.empty():
        line = relay._lines.get_nowait()
        lines.append(json.loads(line) if line is not None else None)
    return lines


def command(request_id: int, line: str) -> dict:
    return {"id": request_id, "method": "item/commandExecution/requestApproval",
            "params": {"itemId": f"call_{request_id}", "command": f"/bin/bash -lc '{line}'", "cwd": WORKTREE}}


@pytest.mark.parametrize("line, decision", [
    ("ls", "accept"), ("git status", "accept"), ("git push origin main", "cancel"), ("cd x && git push", "cancel"),
    ("rm -rf build", "decline"),
])
def test_each_command_is_answered_from_the_rules(line: str, decision: str) -> None:
    answering = relay()
    answering.on_event(command(7, line))
    assert sent(answering) == [{"id": 7, "result": {"decision": decision}}]
    assert (answering.asked is not None) == (decision == "cancel")


def test_a_call_a_person_allowed_is_accepted_and_the_first_asked_is_kept() -> None:
    answering = relay(AllowedCalls([ToolCall("Bash", {"command": "git push origin main"})]))
    answering.on_event(command(1, "git push origin main"))
    answering.on_event(command(2, "git push --force"))
    answering.on_event(command(3, "git push --tags"))
    assert [line["result"]["decision"] for line in sent(answering) if line] == ["accept", "cancel", "cancel"]
    assert answering.asked == ToolCall("Bash", {"command": "git push --force"}, "call_2")
    assert answering.kind == "tool"


def test_a_patch_is_judged_by_its_files_and_one_never_seen_is_declined() -> None:
    answering = relay()
    changes = [{"path": f"{WORKTREE}/notes.txt", "kind": {"type": "add"}, "diff": "free\n"},
               {"path": f"{WORKTREE}/migrations/001.sql", "kind": {"type": "add"}, "diff": "DROP TABLE users;\n"}]
    answering.on_event({"method": "item/started", "params": {"item": {"type": "fileChange", "id": "p1",
                                                                       "changes": changes}}})
    answering.on_event({"id": 4, "method": "item/fileChange/requestApproval", "params": {"itemId": "p1"}})
    answering.on_event({"id": 5, "method": "item/fileChange/requestApproval", "params": {"itemId": "unknown"}})
    assert [line["result"]["decision"] for line in sent(answering) if line] == ["cancel", "decline"]
    assert answering.asked == ToolCall("Write", {"file_path": f"{WORKTREE}/migrations/001.sql",
                                                 "content": "DROP TABLE users;\n"}, "p1")


def test_the_turn_starts_once_the_thread_is_there_and_ends_the_conversation() -> None:
    answering = relay()
    answering._message = "add a test"
    answering.on_event({"id": 1, "result": {"thread": {"id": "01a2"}}})
    answering.on_event({"id": 9, "method": "item/tool/requestUserInput", "params": {}})
    answering.on_event({"method": "turn/completed", "params": {"turn": {"status": "completed"}}})
    start, refused, closed = sent(answering)
    assert start == {"id": 2, "method": "turn/start",
                     "params": {"threadId": "01a2", "input": [{"type": "text", "text": "add a test"}]}}
    assert refused is not None and refused["id"] == 9 and refused["error"]["code"] == -32601
    assert closed is None


async def test_the_opening_resumes_the_thread_and_asks_about_everything() -> None:
    written: list[bytes] = []

    class Stdin:
        def write(self, data: bytes) -> None:
            written.append(data)

        async def drain(self) -> None:
            return None

    answering = relay()
    answering._lines.put_nowait(None)
    await asyncio.wait_for(answering.converse("go on", "01a2", Stdin()), 5)  # type: ignore[arg-type]
    opening = [json.loads(line) for line in written]
    assert [message.get("method") for message in opening] == ["initialize", "initialized", "thread/resume"]
    assert opening[2]["params"] == {"threadId": "01a2", "approvalPolicy": "untrusted"}


def test_a_thread_it_no_longer_has_is_a_lost_session_and_closes_the_conversation() -> None:
    refusal = {"id": 1, "error": {"code": -32600, "message": "no rollout found for thread id 01a2"}}
    answering = relay()
    answering.on_event(refusal)
    assert sent(answering) == [None]
    reader = codex.Reader()
    for event in exec_events(refusal):
        reader._event(event)
    assert reader.error is not None and reader.error.kind == "session"


def test_exec_flags_of_agent_args_become_settings() -> None:
    assert app_server_args(["-m", "gpt-5.5", "--profile=fast", "-c", "model_reasoning_effort=high", "--enable", "x"]) \
        == ["-c", 'model="gpt-5.5"', "-c", 'profile="fast"', "-c", "model_reasoning_effort=high", "--enable", "x"]


def test_codex_speaks_app_server_only_when_a_rule_may_need_a_person(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bubblewrap, "_current", None)
    turn = Turn("add a test", tmp_path, None, tmp_path / "session", 1, relay=relay())
    assert codex.invocation(["codex", "-m", "gpt-5.5"], turn).argv == ["codex", "app-server", "-c", 'model="gpt-5.5"']
    turn.relay = AppServerRelay(parse_rules(""), AllowedCalls(), WORKTREE)
    assert codex.invocation(["codex"], turn).argv[:3] == ["codex", "exec", "--json"]


def test_its_notifications_read_as_exec_events() -> None:
    reader = codex.Reader(Path(WORKTREE))
    messages = [
        {"id": 1, "result": {"thread": {"id": "01a2"}}},
        {"method": "item/completed", "params": {"item": {"type": "fileChange", "status": "completed", "changes": [
            {"path": f"{WORKTREE}/a.py", "kind": {"type": "add"}}]}}},
        {"method": "item/completed", "params": {"item": {"type": "commandExecution", "status": "completed",
                                                         "command": "/bin/bash -lc 'pytest -q'", "exitCode": 0}}},
        {"method": "item/completed", "params": {"item": {"type": "commandExecution", "status": "declined",
                                                         "command": "/bin/bash -lc 'rm -rf x'", "exitCode": None}}},
        {"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {"total": {
            "inputTokens": 3000, "cachedInputTokens": 1000, "outputTokens": 150}}}},
        {"method": "item/completed", "params": {"item": {"type": "agentMessage", "text": "Done."}}},
    ]
    shown = reader.feed("".join(json.dumps(message) + "\n" for message in messages))
    assert shown == ["✎ Wrote `a.py`", "$ `pytest -q` → exit 0", "✗ `rm -rf x` not run: declined", "Done."]
    assert reader.session_id == "01a2" and reader.result == "Done."
    assert reader.usage.input_tokens == 2000 and reader.usage.cache_read_tokens == 1000
