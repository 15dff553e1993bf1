"""A run's record as a readable transcript: what the agent said, each tool it called with its input, and
what the tool answered (shown folded by the page).

Claude Code (and the example agent, which speaks as it does) and Codex print JSON events, one a line,
and the whole stream is the run's log (activities/runs/run_agent.py): those events are read here. Any
other agent has no events: its transcript is its plain output as printed, which the page shows as it is.
Everything here is text taken from the agent: the templates and run.js show it escaped, never as HTML.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath

# Event types of Claude Code's `--output-format stream-json` and of `codex exec --json`; a log with none
# of them is no event stream.
CLAUDE_EVENTS = ("system", "assistant", "user", "result")
# How Claude Code words the interrupt that the run's permission relay answers a call with when a person must
# answer it first (activities/runs/agents/claude_permissions.py): as if a person had refused the call. In
# this service nobody else interrupts Claude Code, so it is a pause, shown as one.
INTERRUPTED = "The user doesn't want to proceed with this tool use"
HELD = "Not run yet: it waits for a person's answer, and the run paused here (Asked, above, says the answer)."
PAUSED = "Paused: a person's answer is asked for (Asked, above); the next run goes on with it."
DIAGNOSTIC = "[ede_diagnostic]"  # Claude Code's own diagnostics of how a turn ended: never its answer
CODEX_EVENTS = ("item.completed", "turn.completed", "turn.failed")
EDIT_TOOLS = ("Write", "Edit", "MultiEdit")
SUMMARY_CHARS = 160
DIFF_CHARS = 200_000  # of one file's edits kept on the page; a tool writing megabytes is cut


@dataclass
class Entry:
    """One step of the transcript. `kind`: start, note, text, tool, result (a tool's answer, until it
    is attached to its call) or answer (the agent's final words; an empty one, at the end of a Codex
    turn, says that its last words were its answer)."""

    kind: str
    text: str = ""
    tool: str = ""  # the tool's name
    tool_id: str = ""  # pairs a call with its result
    summary: str = ""  # the call in one line: a command, a file
    given: str = ""  # the call's whole input, when the summary does not say it all
    diff: str = ""  # what an edit tool wrote, as a diff
    path: str = ""  # the file an edit tool wrote
    result: str | None = None  # a tool's answer; None until it comes
    failed: bool = False
    held: bool = False  # a call that waits for a person's answer: its result says so

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Transcript:
    entries: list[Entry] = field(default_factory=list)
    from_events: bool = False  # False: the log holds no events (a plain agent, or none printed yet)
    edits: dict[str, str] = field(default_factory=dict)  # file -> the diff of what edit tools wrote to it


def transcript(log: str, worktree: str | None = None) -> Transcript:
    """The run's transcript from its stored log, when that is an event stream: each tool's result with its call."""
    entries = events_in(log, worktree)
    if not entries:
        return Transcript()
    paired: list[Entry] = []
    calls: dict[str, Entry] = {}
    for entry in entries:
        if entry.kind == "result" and entry.tool_id in calls:
            call = calls[entry.tool_id]
            call.result, call.failed, call.held = entry.text, entry.failed, entry.held
            continue
        if entry.kind == "tool":
            calls[entry.tool_id] = entry
        if entry.kind == "answer" and paired and paired[-1].kind == "text" and entry.text in ("", paired[-1].text):
            paired[-1].kind = "answer"  # the final answer repeats the agent's last words: said once
            continue
        if entry.kind == "answer" and not entry.text:
            continue
        paired.append(entry)
    return Transcript(paired, True, edits_by_file(paired))


def events_in(log: str, worktree: str | None = None) -> list[Entry]:
    """The entries of the events among the log's lines; other lines (standard error) are left to the raw log."""
    entries: list[Entry] = []
    for line in log.split("\n"):
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") in CLAUDE_EVENTS:
            entries.extend(_entries_of(event, worktree))
        elif isinstance(event, dict) and event.get("type") in CODEX_EVENTS:
            entries.extend(_codex_entries_of(event, worktree))
    return entries


def _entries_of(event: dict, worktree: str | None) -> list[Entry]:
    kind = event["type"]
    if kind == "system":
        return _system(event)
    if kind == "result":
        answer = _result(event)
        return [answer] if answer.text else []
    message = event.get("message") if isinstance(event.get("message"), dict) else {}
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return []
    entries = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if kind == "assistant" and block.get("type") == "text" and str(block.get("text", "")).strip():
            entries.append(Entry("text", str(block["text"]).strip()))
        elif kind == "assistant" and block.get("type") == "tool_use":
            entries.append(_call(block, worktree))
        elif kind == "user" and block.get("type") == "tool_result":
            tool_id, text = str(block.get("tool_use_id", "")), _text_of(block.get("content"))
            if _interrupted(event, tool_id, text):
                entries.append(Entry("result", HELD, tool_id=tool_id, held=True))
            else:
                entries.append(Entry("result", text, tool_id=tool_id, failed=bool(block.get("is_error"))))
    return entries


def _interrupted(event: dict, tool_id: str, text: str) -> bool:
    """A call the relay held for a person: Claude Code says it did not run it (`user-rejected`), in its
    interrupt's words (a call a rule refused carries the rule's reason instead)."""
    meta = event.get("tool_result_meta") if isinstance(event.get("tool_result_meta"), list) else []
    rejected = any(isinstance(item, dict) and item.get("id") == tool_id
                   and item.get("non_execution_kind") == "user-rejected" for item in meta)
    return rejected and text.startswith(INTERRUPTED)


def _codex_entries_of(event: dict, worktree: str | None) -> list[Entry]:
    """Codex says each step once it is done: a message, a command with its output, a file change."""
    if event["type"] == "turn.completed":
        return [Entry("answer")]
    if event["type"] == "turn.failed":
        error = event.get("error") if isinstance(event.get("error"), dict) else {}
        return [Entry("answer", str(error.get("message") or "The turn failed."), failed=True)]
    item = event.get("item") if isinstance(event.get("item"), dict) else {}
    kind = item.get("type")
    if kind == "agent_message" and str(item.get("text", "")).strip():
        return [Entry("text", str(item["text"]).strip())]
    if kind == "command_execution":
        command = str(item.get("command", ""))
        summary = _one_line(command)
        return [Entry("tool", tool="Shell", summary=summary, given=command if summary != command else "",
                      result=str(item.get("aggregated_output") or ""), failed=item.get("exit_code") != 0)]
    if kind == "file_change" and isinstance(item.get("changes"), list):
        changes = [f"{change.get('kind', 'change')} {_relative(str(change.get('path', '')), worktree)}"
                   for change in item["changes"] if isinstance(change, dict)]
        return [Entry("tool", tool="File change", summary=", ".join(changes), failed=item.get("status") == "failed")]
    if kind == "error" and item.get("message"):
        return [Entry("note", str(item["message"]))]
    return []  # its reasoning and to-do lists are its own


def _system(event: dict) -> list[Entry]:
    if event.get("subtype") == "init":
        tools = event.get("tools")
        said = [f"model {event['model']}" if event.get("model") else "",
                f"{len(tools)} tools" if isinstance(tools, list) else "",
                f"permission mode {event['permissionMode']}" if event.get("permissionMode") else ""]
        return [Entry("start", "The agent started: " + ", ".join(part for part in said if part))]
    if event.get("subtype") == "api_retry":
        return [Entry("note", f"The model API answered {event.get('error_status') or event.get('error')}; "
                              f"retry {event.get('attempt')} of {event.get('max_retries')}")]
    return []


def _result(event: dict) -> Entry:
    if event.get("terminal_reason") == "aborted_tools":  # the turn ended at the relay's interrupt
        return Entry("note", PAUSED)
    failed = bool(event.get("is_error")) or str(event.get("subtype", "")).startswith("error")
    text = event.get("result") if isinstance(event.get("result"), str) else ""
    if not text.strip() and isinstance(event.get("errors"), list):
        text = "\n".join(str(error) for error in event["errors"] if not str(error).startswith(DIAGNOSTIC))
    return Entry("answer", text.strip() or ("The agent ended with an error." if failed else ""), failed=failed)


def _call(block: dict, worktree: str | None) -> Entry:
    name = str(block.get("name", ""))
    given = block.get("input") if isinstance(block.get("input"), dict) else {}
    entry = Entry("tool", tool=name, tool_id=str(block.get("id", "")))
    path = _relative(str(given.get("file_path") or given.get("notebook_path") or given.get("path") or ""), worktree)
    if name == "Bash" and isinstance(given.get("command"), str):
        command = given["command"]
        entry.summary = _one_line(command)
        entry.given = command if entry.summary != command else ""
    elif name in EDIT_TOOLS and path:
        entry.summary, entry.path, entry.diff = path, path, _edit_diff(name, given)
    else:
        entry.summary = path or _one_line(str(given.get("pattern") or given.get("url") or given.get("query") or ""))
        shown = {key: _relative(value, worktree) if key.endswith("path") and isinstance(value, str) else value
                 for key, value in given.items()}
        entry.given = json.dumps(shown, indent=2, ensure_ascii=False) if shown else ""
    return entry


def _edit_diff(name: str, given: dict) -> str:
    """What an edit tool wrote: a new file's lines, or each replacement as a diff of its old and new text."""
    if name == "Write":
        return "\n".join(f"+{line}" for line in str(given.get("content", "")).split("\n"))
    edits = given.get("edits") if name == "MultiEdit" and isinstance(given.get("edits"), list) else [given]
    hunks = []
    for edit in edits:
        if isinstance(edit, dict):
            old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
            lines = difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3)
            hunks.extend(line for line in lines if not line.startswith(("---", "+++")))
    return "\n".join(hunks)


def patch_by_file(patch: str) -> dict[str, str]:
    """A run's stored patch (git's, before against after) as each file's part of it, headers left out."""
    files: dict[str, str] = {}
    for part in patch.split("\ndiff --git ") if patch else []:
        head, _, body = part.removeprefix("diff --git ").partition("\n@@")
        name = next((line[6:] for line in head.splitlines() if line.startswith("+++ b/")), None)
        name = name or next((line[6:] for line in head.splitlines() if line.startswith("--- a/")), None)
        if name is not None and body:
            files[name] = "@@" + body
    return files


def edits_by_file(entries: list[Entry]) -> dict[str, str]:
    """Each file an edit tool wrote (not failing, not held for a person), with all its diffs in order (each
    file's capped)."""
    edits: dict[str, str] = {}
    for entry in entries:
        if entry.kind == "tool" and entry.path and not entry.failed and not entry.held:
            edits[entry.path] = (edits[entry.path] + "\n" if entry.path in edits else "") + entry.diff
    return {path: diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n… (cut here)"
            for path, diff in edits.items()}


def _relative(path: str, worktree: str | None) -> str:
    """A path as the user knows it: relative to the worktree when inside it."""
    if worktree and path:
        try:
            return str(PurePosixPath(path).relative_to(worktree))
        except ValueError:
            pass
    return path


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS - 1] + "…"


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
