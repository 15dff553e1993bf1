"""The drivers' command lines and their readers of the agents' output, as pure functions, on event
lines as the real CLIs print them (Claude Code 2.1, Codex 0.169, Aider 0.86)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.runs.agents import aider, claude, codex, command
from activities.runs.agents.base import GaveUp, SessionLost, Turn, Usage
from activities.runs.outcome import usage_text
from activities.runs.queue import plan_for
from activities.runs.run_agent import final_answer
from activities.sandbox import bubblewrap
from isolator.settings import ConfigurationError, load_settings
from tests.gitrepos import git, make_repo

WORKTREE = Path("/srv/worktrees/project/thread-a7f3b2c1")
SESSION = "dbe0445b-ab45-4b20-b70c-fd3d3fa7dfdd"


def turn(session_id: str | None = None, run_number: int = 1, tmp: Path = Path("/nowhere"), **extra: object) -> Turn:
    return Turn("add a test", WORKTREE, session_id, tmp, run_number, **extra)  # type: ignore[arg-type]


def lines(*events: dict) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


CLAUDE_RUN = lines(
    {"type": "system", "subtype": "init", "cwd": str(WORKTREE), "session_id": SESSION, "tools": ["Bash", "Write"],
     "model": "claude-opus-5-5", "permissionMode": "acceptEdits"},
    {"type": "assistant", "session_id": SESSION, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Write",
         "input": {"file_path": f"{WORKTREE}/a.txt", "content": "hello\n"}}]}},
    {"type": "user", "session_id": SESSION, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "File created successfully"}]},
     "tool_use_result": {"type": "create", "filePath": f"{WORKTREE}/a.txt"}},
    {"type": "assistant", "session_id": SESSION, "message": {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "now test it"},
        {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "ls; false"}}]}},
    {"type": "user", "session_id": SESSION, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "Exit code 1", "is_error": True}]}},
    {"type": "assistant", "session_id": SESSION, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_3", "name": "Read", "input": {"file_path": f"{WORKTREE}/a.txt"}}]}},
    {"type": "assistant", "session_id": SESSION, "message": {"role": "assistant", "content": [
        {"type": "text", "text": "I wrote a.txt."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": "I wrote a.txt.",
     "session_id": SESSION, "total_cost_usd": 0.015, "api_error_status": None,
     "usage": {"input_tokens": 3000, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 800,
               "output_tokens": 150}},
)


def test_claude_events_become_progress_lines_a_final_answer_and_usage() -> None:
    reader = claude.Reader(WORKTREE)
    shown = []
    for cut in range(0, len(CLAUDE_RUN), 97):  # output arrives in arbitrary pieces
        shown += reader.feed(CLAUDE_RUN[cut:cut + 97])
    reader.end(0, [])
    assert shown == ["✎ Wrote `a.txt`", "$ `ls; false` → exit 1", "I wrote a.txt."], "no thinking, no Read"
    assert reader.session_id == SESSION and reader.error is None
    assert reader.usage == Usage(3000, 150, 800, 200, 0.015)
    assert final_answer(reader) == "• wrote `a.txt`\n• ran `ls; false` (exit 1)\n\nI wrote a.txt.\n"
    assert usage_text(reader.usage) == "$0.01 · 4.2k tokens"


@pytest.mark.parametrize("status, result, kind", [
    (401, "Invalid API key · Fix external API key", "auth"),
    (429, "API Error: Request rejected (429) · This request would exceed your rate limit.", "rate_limit"),
    (529, "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.",
     "overloaded"),
    (500, "API Error: 500 Internal server error. This is a server-side issue, usually temporary.", "api"),
])
def test_claude_api_errors_are_read_from_is_error_while_subtype_says_success(status: int, result: str, kind: str) -> None:
    reader = claude.Reader()
    reader.feed(lines({"type": "result", "subtype": "success", "is_error": True, "api_error_status": status,
                       "result": result, "session_id": SESSION, "total_cost_usd": 0, "usage": {}}))
    reader.end(1, [])
    assert reader.error is not None and reader.error.kind == kind and reader.error.detail.startswith(result[:20])


def test_claude_retries_show_and_limits_and_lost_sessions_are_told_apart() -> None:
    reader = claude.Reader()
    shown = reader.feed(lines({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2,
                               "error_status": 529, "error": "overloaded"}))
    assert shown == ["⚠ The model API answered 529; retry 1 of 2…"]
    turns = claude.Reader()
    turns.feed(lines({"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 3}))
    turns.end(1, [])
    assert turns.error is not None and turns.error.kind == "turn_limit"
    lost = claude.Reader()
    lost.feed(lines({"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
                     "errors": [f"No conversation found with session ID: {SESSION}"]}))
    lost.end(1, [f"No conversation found with session ID: {SESSION}"])
    assert lost.error is not None and lost.error.kind == "session"


def test_claude_command_line_resumes_caps_cost_and_bounds_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
    monkeypatch.setattr(claude, "sandboxed", lambda: False)  # SANDBOX=off
    monkeypatch.setattr(claude, "bundled_claude", lambda: None)  # `claude` as it is, wherever PATH finds it
    fresh = claude.invocation(["claude", "--model", "opus"], turn())
    assert fresh.argv == ["claude", "-p", "--output-format", "stream-json", "--verbose",
                          "--permission-mode", claude.UNCONFINED_MODE, "--model", "opus"]
    assert fresh.stdin == b"add a test" and fresh.env == {"CLAUDE_CODE_MAX_RETRIES": "2"}
    resumed = claude.invocation(["claude"], turn(SESSION, max_cost_usd=0.5))
    assert resumed.argv[-4:] == ["--resume", SESSION, "--max-budget-usd", "0.5"]
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "7")
    assert claude.invocation(["claude"], turn()).env == {}, "the operator's own value wins"
    monkeypatch.setattr(claude, "sandboxed", lambda: True)  # told it is sandboxed: it works autonomously
    assert claude.invocation(["claude"], turn()).argv[5:7] == ["--permission-mode", claude.SANDBOXED_MODE]


CODEX_RUN = lines(
    {"type": "thread.started", "thread_id": "01a21300-9834-7471-a546-6c2cc7d2b808"},
    {"type": "turn.started"},
    {"type": "item.started", "item": {"id": "item_0", "type": "file_change", "status": "in_progress",
                                      "changes": [{"path": f"{WORKTREE}/a.txt", "kind": "add"}]}},
    {"type": "item.completed", "item": {"id": "item_0", "type": "file_change", "status": "completed",
                                        "changes": [{"path": f"{WORKTREE}/a.txt", "kind": "add"}]}},
    {"type": "item.completed", "item": {"id": "item_r", "type": "reasoning", "text": "thinking"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                        "command": "/bin/bash -lc 'ls; false'", "aggregated_output": "a.txt\n",
                                        "exit_code": 1, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "I wrote a.txt."}},
    {"type": "turn.completed", "usage": {"input_tokens": 4000, "cached_input_tokens": 1000, "output_tokens": 150,
                                         "reasoning_output_tokens": 0}},
)


def test_codex_events_become_progress_lines_and_its_thread_usage_is_counted_per_run() -> None:
    reader = codex.Reader(WORKTREE)
    reader.baseline = Usage(input_tokens=1000, output_tokens=50)  # what the thread had used before this run
    shown = reader.feed(CODEX_RUN)
    reader.end(0, ["Reading additional input from stdin..."])
    assert shown == ["✎ Wrote `a.txt`", "$ `ls; false` → exit 1", "I wrote a.txt."]
    assert reader.session_id == "01a21300-9834-7471-a546-6c2cc7d2b808" and reader.error is None
    assert reader.usage == Usage(input_tokens=2000, output_tokens=100, cache_read_tokens=1000)
    assert reader.thread_usage == Usage(input_tokens=3000, output_tokens=150, cache_read_tokens=1000)
    assert usage_text(reader.usage) == "3.1k tokens", "Codex reports no money"


@pytest.mark.parametrize("message, kind, resets", [
    ("unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1:1/v1/responses",
     "auth", None),
    ("You’ve hit your usage limit. Try again at 2:59 PM.", "rate_limit", "at 2:59 PM"),
    ("unexpected status 529 <unknown status code>: The engine is currently overloaded.", "overloaded", None),
    ("We’re currently experiencing high demand, which may cause temporary errors.", "api", None),
])
def test_codex_failed_turns_are_named(message: str, kind: str, resets: str | None) -> None:
    reader = codex.Reader()
    reader.feed(lines({"type": "error", "message": message}, {"type": "turn.failed", "error": {"message": message}}))
    reader.end(1, [])
    assert reader.error is not None and (reader.error.kind, reader.error.resets) == (kind, resets)


def test_codex_command_line_closes_stdin_and_resumes_its_thread(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bubblewrap, "_current", None)  # unconfined: Codex's own sandbox is its settings'
    fresh = codex.invocation(["codex", "-m", "gpt-5.5"], turn())
    assert fresh.argv == ["codex", "exec", "--json", "-m", "gpt-5.5", "--", "add a test"] and fresh.stdin is None
    resumed = codex.invocation(["codex"], turn("01a2"))
    assert resumed.argv == ["codex", "exec", "--json", "resume", "01a2", "--", "add a test"]
    monkeypatch.setattr(bubblewrap, "_current", bubblewrap.Sandbox(True, None, "open", (), (), tmp_path))
    sandboxed = codex.invocation(["codex", "-s", "workspace-write"], turn())
    assert sandboxed.argv[:6] == ["codex", "exec", "--json", "-c", 'sandbox_mode="danger-full-access"', "-s"], \
        "in ours, Codex's own sandbox (which cannot start there) is off, and AGENT_ARGS come after"
    lost = codex.Reader()
    lost.end(1, ["Error: thread/resume failed: no rollout found for thread id 01a2 (code -32600)", "",
                 "Stack backtrace:"])
    assert lost.error is not None and lost.error.kind == "session"


def test_aider_keeps_its_history_outside_the_worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bubblewrap, "_current", bubblewrap.Sandbox(True, None, "open", (), (), tmp_path))
    first = aider.invocation(["aider", "--model", "openai/gpt-4o"], turn(tmp=tmp_path))
    assert "--yes-always" not in first.argv, "in the sandbox, its questions take their defaults: yes to commands too"
    assert (tmp_path / "message.txt").read_text() == "add a test" and first.stdin is None
    assert "--restore-chat-history" not in first.argv
    assert first.argv[first.argv.index("--chat-history-file") + 1] == str(tmp_path / "chat-history.md")
    assert first.argv[-4:] == ["--model", "openai/gpt-4o", "--message-file", str(tmp_path / "message.txt")]
    with pytest.raises(SessionLost):  # a later turn whose history is gone: a new session instead
        aider.invocation(["aider"], turn(run_number=2, tmp=tmp_path))
    (tmp_path / "chat-history.md").write_text("# aider chat started\n")
    assert "--restore-chat-history" in aider.invocation(["aider"], turn(run_number=2, tmp=tmp_path)).argv
    monkeypatch.setattr(bubblewrap, "_current", bubblewrap.Sandbox(False, None, "open", (), (), tmp_path))
    assert "--yes-always" in aider.invocation(["aider"], turn(tmp=tmp_path)).argv, "unconfined, it only edits"


def test_aiders_tags_cache_is_ignored_through_the_repositorys_own_exclude(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git("worktree", "add", "-q", "-b", "thread", str(tmp_path / "thread"), cwd=repo)
    for _ in range(2):
        aider.exclude_tags_cache(tmp_path / "thread")
    assert (repo / ".git" / "info" / "exclude").read_text().splitlines().count(aider.TAGS_CACHE) == 1
    (tmp_path / "thread" / ".aider.tags.cache.v4").mkdir()
    (tmp_path / "thread" / ".aider.tags.cache.v4" / "cache.db").write_text("x")
    assert git("status", "--porcelain", cwd=tmp_path / "thread") == ""


# As Aider 0.86.2 printed it in the sandbox (standard input closed: each question takes its default, yes).
AIDER_RUN = """Update git name with: git config user.name "Your Name"
Aider v0.86.2
Main model: openai/gpt-4o with diff edit format
Weak model: gpt-4o-mini
Git repo: .git with 1 files
Repo-map: using 4096 tokens, auto refresh
Restored previous conversation history.

I wrote hello.txt.

hello.txt
```
<<<<<<< SEARCH
=======
hello
>>>>>>> REPLACE
```

```bash
echo checked; exit 3
```

Tokens: 2.6k sent, 42 received. Cost: $0.0068 message, $0.0068 session.

hello.txt
Create new file? (Y)es/(N)o [Yes]: Applied edit to hello.txt

echo checked; exit 3
Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: 
Running echo checked; exit 3
checked
Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: Added 2 lines of output to the chat.
"""


def test_aider_output_is_read_into_progress_lines_the_answer_and_its_cost() -> None:
    reader = aider.Reader(WORKTREE)
    shown = [part for cut in range(0, len(AIDER_RUN), 37) for part in reader.feed(AIDER_RUN[cut:cut + 37])]
    reader.end(0, [])
    assert shown == ["I wrote hello.txt.", "✎ Wrote `hello.txt`", "$ `echo checked; exit 3`"]
    assert reader.did == ["wrote `hello.txt`", "ran `echo checked; exit 3`"] and reader.error is None
    assert final_answer(reader) == "• wrote `hello.txt`\n• ran `echo checked; exit 3`\n\nI wrote hello.txt.\n"
    assert reader.usage == Usage(input_tokens=2600, output_tokens=42, cost_usd=0.0068)


AIDER_BANNER = "Aider v0.86.2\nRepo-map: using 4096 tokens, auto refresh\n\n"


@pytest.mark.parametrize("error, kind, resets", [
    ("litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key provided: sk-t.",
     "auth", None),
    ("litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached. Please try again in 3600s.",
     "rate_limit", "in 3600s"),
    ("litellm.APIError: APIError: OpenAIException - The engine is currently overloaded.", "overloaded", None),
    ("litellm.InternalServerError: InternalServerError: OpenAIException - Internal server error", "api", None),
])
def test_aider_errors_are_named_and_its_retries_bounded(error: str, kind: str, resets: str | None) -> None:
    reader = aider.Reader()
    # What Aider adds below litellm's words ("... down or overloaded") does not count.
    said = f"{error}\nThe API provider's servers are down or overloaded.\n"
    reader.feed(AIDER_BANNER + said)
    assert reader.error is not None and (reader.error.kind, reader.error.resets) == (kind, resets)
    assert "Retrying" not in reader.error.detail
    retry = said + "Retrying in 0.2 seconds...\n"
    reader.feed(retry * aider.MAX_RETRIES)
    with pytest.raises(GaveUp):
        reader.feed(retry)
    recovered = aider.Reader()
    recovered.feed(AIDER_BANNER + retry + "Done.\nTokens: 900 sent, 3 received.\n")
    recovered.end(0, [])
    assert recovered.error is None and recovered.result == "Done." and recovered.usage.cost_usd is None


def test_the_command_driver_passes_its_session_folder_and_run_number(tmp_path: Path) -> None:
    call = command.invocation(["./agent.sh", "-v"], turn(run_number=3, tmp=tmp_path))
    assert call.argv == ["./agent.sh", "-v"] and call.stdin == b"add a test"
    assert call.env == {"ISOLATOR_SESSION_DIR": str(tmp_path), "ISOLATOR_RUN_NUMBER": "3"}


def test_agent_selects_the_driver_and_agent_command_alone_keeps_meaning_command() -> None:
    both = load_settings(agent_driver="claude", agent_command_line="./agent.py", agent_args_line="--model 'opus 5'")
    plan = plan_for(both, None)
    assert (plan.driver, plan.argv, plan.source) == ("claude", ["claude", "--model", "opus 5"], "AGENT")
    alone = plan_for(load_settings(agent_command_line="./agent.py --fast"), None)
    assert (alone.driver, alone.argv) == ("command", ["./agent.py", "--fast"])
    executable = plan_for(load_settings(agent_driver="codex", agent_executable="/opt/codex/bin/codex"), None)
    assert (executable.argv, executable.source) == (["/opt/codex/bin/codex"], "AGENT_EXECUTABLE")
    codebase = plan_for(both, ["ignored"], {"agent": "aider", "executable": "aider", "args": ["--model", "x"]})
    assert (codebase.driver, codebase.argv) == ("aider", ["aider", "--model", "x"])
    with pytest.raises(ConfigurationError, match="AGENT: .*needs AGENT_COMMAND"):
        load_settings(agent_driver="command")
    with pytest.raises(ConfigurationError, match="AGENT_ARGS"):
        load_settings(agent_args_line="--model 'unclosed")


def test_an_aider_error_wrapped_by_its_console_is_read_whole() -> None:
    """A console 80 columns wide cuts litellm's message in two; Aider's own explanation below it still does not count."""
    reader = aider.Reader()
    reader.feed("litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached.\n"
                "Please try again in 3600s.\nThe API provider has rate limited you. Try again later or check "
                "your quotas.\n")
    assert reader.error is not None and (reader.error.kind, reader.error.resets) == ("rate_limit", "in 3600s")
    assert "quotas" not in reader.error.detail
    reader = aider.Reader()
    reader.feed("litellm.InternalServerError: InternalServerError: OpenAIException - Internal server\nerror\n"
                "The API provider's servers are down or overloaded.\n")
    assert reader.error is not None and reader.error.kind == "api" and reader.error.detail.endswith("server error")
