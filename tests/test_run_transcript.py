"""The run page's transcript read from a run's stored log: Claude Code's stream-json events into the
agent's words, its tool calls with their input and results, its final answer said once, and the diffs of
what its edit tools wrote; a log with no events (a plain agent) has no transcript of its own."""

from __future__ import annotations

import json

from api.dashboard.transcript import DIFF_CHARS, events_in, patch_by_file, transcript

WORKTREE = "/srv/worktrees/project/thread-1234abcd"


def _log(*events: dict, stderr: str = "") -> str:
    return "".join(json.dumps({**event, "session_id": "s-1"}) + "\n" for event in events) + stderr


def _said(text: str) -> dict:
    return {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}


def _call(call_id: str, name: str, given: dict) -> dict:
    return {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": call_id, "name": name,
                                                          "input": given}]}}


def _answer(call_id: str, text: object, failed: bool = False) -> dict:
    return {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": call_id,
                                                     "content": text, "is_error": failed}]}}


INIT = {"type": "system", "subtype": "init", "cwd": WORKTREE, "model": "claude-x", "tools": ["Bash"] * 40,
        "permissionMode": "bypassPermissions", "mcp_servers": [], "slash_commands": ["x"] * 200}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "result": "All done.", "total_cost_usd": 0.1}


def test_a_claude_run_reads_as_words_calls_with_results_and_one_answer() -> None:
    log = _log(INIT, _said("Looking around."), _call("t1", "Bash", {"command": "git status --short"}),
               _answer("t1", [{"type": "text", "text": "?? NOTES.md"}]), _said("All done."), RESULT,
               stderr="a warning on standard error\n")
    read = transcript(log, WORKTREE)
    assert read.from_events
    assert [entry.kind for entry in read.entries] == ["start", "text", "tool", "answer"]
    start, words, call, answer = read.entries
    assert start.text == "The agent started: model claude-x, 40 tools, permission mode bypassPermissions"
    assert words.text == "Looking around."
    assert (call.tool, call.summary, call.given, call.result, call.failed) == \
        ("Bash", "git status --short", "", "?? NOTES.md", False)
    assert answer.text == "All done."  # the last words and the result are the same: said once


def test_a_final_answer_other_than_the_last_words_is_its_own_entry_and_failures_are_marked() -> None:
    log = _log(_said("Trying."), _call("t1", "Bash", {"command": "make test"}),
               _answer("t1", "Exit code 2\nFAILED", failed=True),
               {"type": "result", "subtype": "error_during_execution", "is_error": True, "errors": ["it broke"]})
    kinds = [(entry.kind, entry.failed) for entry in transcript(log).entries]
    assert kinds == [("text", False), ("tool", True), ("answer", True)]
    assert transcript(log).entries[-1].text == "it broke"


def test_edits_show_as_diffs_with_paths_relative_to_the_worktree() -> None:
    log = _log(_call("w", "Write", {"file_path": f"{WORKTREE}/NOTES.md", "content": "one\ntwo"}),
               _answer("w", "File created"),
               _call("e", "Edit", {"file_path": f"{WORKTREE}/NOTES.md", "old_string": "two", "new_string": "three"}),
               _answer("e", "File updated"),
               _call("x", "Edit", {"file_path": f"{WORKTREE}/refused.py", "old_string": "a", "new_string": "b"}),
               _answer("x", "String not found", failed=True),
               _call("r", "Read", {"file_path": "/etc/hosts"}), _answer("r", "127.0.0.1 localhost"))
    read = transcript(log, WORKTREE)
    write, edit, refused, reading = read.entries
    assert (write.summary, write.diff) == ("NOTES.md", "+one\n+two")
    assert edit.diff.splitlines()[1:] == ["-two", "+three"] and edit.diff.startswith("@@")
    assert refused.failed and "refused.py" not in read.edits  # a refused edit changed nothing
    assert list(read.edits) == ["NOTES.md"] and read.edits["NOTES.md"] == f"{write.diff}\n{edit.diff}"
    assert reading.summary == "/etc/hosts" and json.loads(reading.given) == {"file_path": "/etc/hosts"}


def test_a_huge_write_is_cut_in_the_changes() -> None:
    log = _log(_call("w", "Write", {"file_path": "big.txt", "content": "x" * (DIFF_CHARS + 10)}), _answer("w", "ok"))
    assert transcript(log).edits["big.txt"].endswith("… (cut here)")


def test_a_codex_run_reads_as_its_messages_commands_with_output_and_changes_its_last_message_the_answer() -> None:
    log = _log({"type": "thread.started", "thread_id": "t"},
               {"type": "item.completed", "item": {"type": "reasoning", "text": "thinking"}},
               {"type": "item.completed", "item": {"type": "agent_message", "text": "Looking."}},
               {"type": "item.completed", "item": {"type": "command_execution", "command": "bash -lc 'ls; false'",
                                                   "aggregated_output": "a.txt\n", "exit_code": 1}},
               {"type": "item.completed", "item": {"type": "file_change", "status": "completed",
                                                   "changes": [{"path": f"{WORKTREE}/a.txt", "kind": "add"}]}},
               {"type": "item.completed", "item": {"type": "agent_message", "text": "I wrote a.txt."}},
               {"type": "turn.completed", "usage": {"input_tokens": 10}})
    read = transcript(log, WORKTREE)
    assert [(entry.kind, entry.text or entry.summary) for entry in read.entries] == [
        ("text", "Looking."), ("tool", "bash -lc 'ls; false'"), ("tool", "add a.txt"), ("answer", "I wrote a.txt.")]
    assert (read.entries[1].result, read.entries[1].failed, read.entries[2].result) == ("a.txt\n", True, None)
    failed = transcript(_log({"type": "turn.failed", "error": {"message": "429 usage limit"}}))
    assert [(entry.kind, entry.text, entry.failed) for entry in failed.entries] == [("answer", "429 usage limit", True)]


def test_a_plain_agent_s_log_and_broken_or_foreign_lines_make_no_entries() -> None:
    assert not transcript("working on tick 1\nTraceback (most recent call last):\n").from_events
    foreign = '{"type":"thread.started","thread_id":"t"}\n{"type":"item.completed","item":{}}\n{"type":"ping"}\n'
    assert transcript(foreign).entries == []
    half = json.dumps(_said("cut mid-line"))[:20]  # a line not yet whole is no event
    assert events_in(_log(_said("whole")) + half)[0].text == "whole" and len(events_in(half)) == 0
    odd = '{"type": "assistant", "message": "not a dict"}\n{"type": "user", "message": {"content": "text"}}\n[1]\n'
    assert events_in(odd) == []


def test_a_long_command_is_summarised_in_one_line_and_shown_whole() -> None:
    command = "python - <<'EOF'\n" + "print(1)\n" * 40 + "EOF"
    call = transcript(_log(_call("b", "Bash", {"command": command}))).entries[0]
    assert "\n" not in call.summary and len(call.summary) <= 160 and call.given == command
    assert call.result is None  # no result yet: the run goes on


def test_a_runs_patch_is_split_by_file() -> None:
    patch = ("diff --git a/app.py b/app.py\nindex 1..2 100644\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-old\n+new\n"
             "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-bye\n")
    assert patch_by_file(patch) == {"app.py": "@@ -1 +1 @@\n-old\n+new", "gone.txt": "@@ -1 +0,0 @@\n-bye\n"}
    assert patch_by_file("") == {}
