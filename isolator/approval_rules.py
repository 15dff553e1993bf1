"""Which tool calls need a person's yes (docs/approvals.md): AGENT_APPROVALS and `[approvals]`, in Claude
Code's own rule syntax, read and matched here; pure functions, no I/O.

    AGENT_APPROVALS='ask: Bash(git push:*), Write(migrations/**); deny: Bash(rm -rf:*), WebFetch'

A rule is a tool name (`WebFetch`, `mcp__github__*`) or a tool with a specifier: `Bash(git push:*)` (the
command begins so), `Bash(npm run *)` (a wildcard), `Bash(make)` (exactly), `Write(migrations/**)` and
`Edit(...)` (a path of the worktree, gitignore-style, for every tool that edits files),
`WebFetch(domain:example.com)`. A command line matches when any command it runs does, as
isolator/shell_commands.py reads it (`cd x && git push`, `(git push)`, `echo $(git push)`); a person's rule
allows it only when it allows every one of them.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from isolator.contracts.approvals import AllowedCalls, ToolCall
from isolator.shell_commands import Command, Unreadable, commands

Verdict = Literal["allow", "ask", "deny"]
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Always a person's to answer, whatever the rules: the agent asks them something.
QUESTION_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
_RULE = re.compile(r"^(?P<tool>[A-Za-z_][\w*.-]*)(?:\((?P<specifier>.*)\))?$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be read, in words for the one who wrote it."""


@dataclass(frozen=True)
class Rule:
    tool: str
    specifier: str | None = None

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


@dataclass
class ApprovalRules:
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return bool(self.ask or self.deny)

    def bounded_by(self, repository: ApprovalRules) -> ApprovalRules:
        """The operator's rules with a repository's added: a repository may ask or deny more, never less."""
        return ApprovalRules(_union(self.ask, repository.ask), _union(self.deny, repository.deny))


def parse_rule(text: str) -> Rule:
    found = _RULE.match(text.strip())
    if found is None or not text.strip():
        raise RuleError(f"`{text.strip()}` is not a rule: write a tool's name, or a tool with what it "
                        "applies to, such as `Bash(git push:*)` or `Write(migrations/**)`")
    specifier = found.group("specifier")
    if specifier is not None and not specifier.strip():
        raise RuleError(f"`{text.strip()}` has nothing between its parentheses: write `{found.group('tool')}` alone "
                        "for every use of the tool")
    return Rule(found.group("tool"), specifier.strip() if specifier is not None else None)


def parse_rules(setting: str) -> ApprovalRules:
    """`ask: <rule>, <rule>; deny: <rule>` (either part may be left out)."""
    rules = ApprovalRules()
    for part in _split(setting, ";"):
        name, colon, listed = part.partition(":")
        name = name.strip().lower()
        if not colon or name not in ("ask", "deny"):
            raise RuleError(f"`{part.strip()}` does not begin with `ask:` or `deny:`: write "
                            "`ask: Bash(git push:*); deny: WebFetch`")
        getattr(rules, name).extend(parse_rule(rule) for rule in _split(listed, ","))
    return rules


def rules_from_lists(ask: list[str], deny: list[str]) -> ApprovalRules:
    """`[approvals] ask = [...]`, `deny = [...]` of `.isolator.toml`."""
    return ApprovalRules([parse_rule(rule) for rule in ask], [parse_rule(rule) for rule in deny])


def verdict(call: ToolCall, rules: ApprovalRules, allowed: AllowedCalls, worktree: str,
            asked_by_rule: bool = False) -> Verdict:
    """Deny wins; then what a person allowed (this very call, or the conversation's rules when they allow
    every command of it); then the asking rules, every question of the agent, and every call Claude Code
    asked about because of a rule (`asked_by_rule`: its reading of a command may find what ours does not);
    everything else is allowed, as without rules."""
    if any(matches(rule, call, worktree) for rule in rules.deny):
        return "deny"
    if any(same_call(call, given) for given in allowed.calls):
        return "allow"
    if call.tool_name not in QUESTION_TOOLS and _allowed_by(list(map(parse_rule, allowed.rules)), call, worktree):
        return "allow"
    if asked_by_rule or call.tool_name in QUESTION_TOOLS or any(matches(rule, call, worktree, asking=True)
                                                                for rule in rules.ask):
        return "ask"
    return "allow"


def matches(rule: Rule, call: ToolCall, worktree: str, asking: bool = False) -> bool:
    """Whether a rule names the call. A command line is named when it is, or any command it runs is; an
    asking rule also names every command whose name is not known before it runs (`$tool push`), and a line
    that cannot be read."""
    if rule.tool in ("Write", "Edit") and rule.specifier is not None:
        return call.tool_name in EDIT_TOOLS and _path_matches(rule.specifier, _path_of(call), worktree)
    if not fnmatch.fnmatchcase(call.tool_name, rule.tool):
        return rule.tool in ("Write", "Edit") and call.tool_name in EDIT_TOOLS and rule.specifier is None
    if rule.specifier is None:
        return True
    if call.tool_name == "Bash":
        line = str(call.input.get("command", ""))
        return _line_matches(rule.specifier, line.strip()) or any(
            (asking and not part.known) or _command_matches(rule.specifier, part) for part in _parts(line))
    if call.tool_name == "WebFetch" and rule.specifier.startswith("domain:"):
        return _host(str(call.input.get("url", ""))) == rule.specifier.removeprefix("domain:").lower()
    return fnmatch.fnmatchcase(_first_text(call.input), rule.specifier)


def _allowed_by(given: list[Rule], call: ToolCall, worktree: str) -> bool:
    """Whether the rules a person allowed allow the call. A command line is allowed when it is the very line a
    rule names, or when every command it runs is named by one of them (so that `git push; rm -rf x` does
    not ride on `Bash(git push:*)`)."""
    if call.tool_name != "Bash":
        return any(matches(rule, call, worktree) for rule in given)
    bash = [rule for rule in given if fnmatch.fnmatchcase(call.tool_name, rule.tool)]
    line = str(call.input.get("command", "")).strip()
    if any(rule.specifier is None or rule.specifier.strip() == line for rule in bash):
        return True
    parts = _parts(line)
    return bool(parts) and all(part.known and any(_command_matches(str(rule.specifier), part) for rule in bash)
                               for part in parts)


def same_call(one: ToolCall, other: ToolCall) -> bool:
    """The same call again: a Bash command by its command (its description is the model's words)."""
    if one.tool_name != other.tool_name:
        return False
    if one.tool_name == "Bash":
        return one.input.get("command") == other.input.get("command")
    return json.dumps(one.input, sort_keys=True) == json.dumps(other.input, sort_keys=True)


def conversation_rule(call: ToolCall, worktree: str) -> str:
    """What "allow for this conversation" keeps: the rule Claude Code suggested, else the exact call."""
    if call.suggested_rule:
        return call.suggested_rule
    if call.tool_name == "Bash":
        return f"Bash({call.input.get('command', '')})"
    if call.tool_name in EDIT_TOOLS and _path_of(call):
        return f"{call.tool_name}({relative_to_worktree(_path_of(call), worktree)})"
    if call.tool_name == "WebFetch" and _host(str(call.input.get("url", ""))):
        return f"WebFetch(domain:{_host(str(call.input['url']))})"
    return call.tool_name


def _line_matches(specifier: str, line: str) -> bool:
    """A rule against a command line as written (a rule may name operators: `Bash(cd * && make)`)."""
    if specifier.endswith(":*"):  # the legacy prefix form: the command, then nothing or its arguments
        prefix = specifier[:-2].strip()
        return line == prefix or line.startswith(prefix + " ")
    if "*" in specifier:
        return _wildcard(specifier, line)
    return line == specifier


def _command_matches(specifier: str, command: Command) -> bool:
    """A rule against one command, word by word (`git  push` and `'git' push` are `git push`)."""
    if specifier.endswith(":*"):
        prefix = _words(specifier[:-2])
        return command.words[:len(prefix)] == prefix
    if "*" in specifier:
        return _wildcard(specifier, " ".join(command.words))
    return command.words == _words(specifier)


def _wildcard(specifier: str, text: str) -> bool:
    return re.fullmatch(".*".join(re.escape(piece) for piece in specifier.split("*")), text, re.DOTALL) is not None


def _words(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError:  # an unclosed quote in a rule: its words as written
        return tuple(text.split())


def _parts(line: str) -> list[Command]:
    """The commands a line runs; a line that cannot be read is one command nobody can name."""
    try:
        return commands(line)
    except Unreadable:
        return [Command((line,), known=False)]


def _path_matches(pattern: str, path: str, worktree: str) -> bool:
    if not path:
        return False
    if pattern.startswith("//"):  # absolute
        relative, pattern = path, pattern[1:]
    else:
        relative = relative_to_worktree(path, worktree)
        pattern = pattern.removeprefix("./").removeprefix("/")
    if "/" not in pattern.rstrip("/"):  # a bare name matches at any depth, as in .gitignore
        pattern = "**/" + pattern
    return re.fullmatch(_glob(pattern), relative) is not None or re.fullmatch(_glob(pattern) + "/.*", relative) is not None


def _glob(pattern: str) -> str:
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return "".join(out)


def _path_of(call: ToolCall) -> str:
    return str(call.input.get("file_path") or call.input.get("notebook_path") or call.input.get("path") or "")


def relative_to_worktree(path: str, worktree: str) -> str:
    """A path of the worktree as a person reads it; any other path as it is."""
    try:
        return str(PurePosixPath(path).relative_to(worktree))
    except ValueError:
        return path


def _host(url: str) -> str:
    found = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)", url.strip(), re.IGNORECASE)
    return found.group(1).lower() if found else ""


def _first_text(given: dict) -> str:
    return next((value for value in given.values() if isinstance(value, str)), json.dumps(given, sort_keys=True))


def _split(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside parentheses; empty pieces dropped."""
    pieces, depth, current = [], 0, []
    for character in text:
        if character == "(":
            depth += 1
        elif character == ")":
            depth = max(0, depth - 1)
        if character == separator and depth == 0:
            pieces.append("".join(current))
            current = []
        else:
            current.append(character)
    pieces.append("".join(current))
    return [piece for piece in pieces if piece.strip()]


def _union(first: list[Rule], second: list[Rule]) -> list[Rule]:
    return [*first, *(rule for rule in second if rule not in first)]

