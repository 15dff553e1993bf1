"""Which tool calls need a person's yes (docs/approvals.md): AGENT_APPROVALS and `[approvals]`, in Claude
Code's own rule syntax, read and matched here; pure functions, no I/O.

    AGENT_APPROVALS='ask: Bash(git push:*), Write(migrations/**); deny: Bash(rm -rf:*), WebFetch'

A rule is a tool name (`WebFetch`, `mcp__github__*`) or a tool with a specifier: `Bash(git push:*)` (the
command begins so), `Bash(npm run *)` (a wildcard), `Bash(make)` (exactly), `Write(migrations/**)` and
`Edit(...)` (a path of the worktree, gitignore-style, for every tool that edits files),
`WebFetch(domain:example.com)`. A compound command (`a && b`, `a | b`) matches when one of its parts does.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from isolator.contracts.approvals import AllowedCalls, ToolCall

Verdict = Literal["allow", "ask", "deny"]
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Always a person's to answer, whatever the rules: the agent asks them something.
QUESTION_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
_RULE = re.compile(r"^(?P<tool>[A-Za-z_][\w*.-]*)(?:\((?P<specifier>.*)\))?$", re.DOTALL)
_SHELL_OPERATORS = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")


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


def verdict(call: ToolCall, rules: ApprovalRules, allowed: AllowedCalls, worktree: str) -> Verdict:
    """Deny wins; then what a person allowed (this very call, or a rule of the conversation); then the
    asking rules, and every question of the agent; everything else is allowed, as without rules."""
    if any(matches(rule, call, worktree) for rule in rules.deny):
        return "deny"
    if any(same_call(call, given) for given in allowed.calls):
        return "allow"
    if call.tool_name not in QUESTION_TOOLS and any(matches(parse_rule(rule), call, worktree)
                                                    for rule in allowed.rules):
        return "allow"
    if call.tool_name in QUESTION_TOOLS or any(matches(rule, call, worktree) for rule in rules.ask):
        return "ask"
    return "allow"


def matches(rule: Rule, call: ToolCall, worktree: str) -> bool:
    if rule.tool in ("Write", "Edit") and rule.specifier is not None:
        return call.tool_name in EDIT_TOOLS and _path_matches(rule.specifier, _path_of(call), worktree)
    if not fnmatch.fnmatchcase(call.tool_name, rule.tool):
        return rule.tool in ("Write", "Edit") and call.tool_name in EDIT_TOOLS and rule.specifier is None
    if rule.specifier is None:
        return True
    if call.tool_name == "Bash":
        return any(_command_matches(rule.specifier, part) for part in _commands(str(call.input.get("command", ""))))
    if call.tool_name == "WebFetch" and rule.specifier.startswith("domain:"):
        return _host(str(call.input.get("url", ""))) == rule.specifier.removeprefix("domain:").lower()
    return fnmatch.fnmatchcase(_first_text(call.input), rule.specifier)


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


def _command_matches(specifier: str, command: str) -> bool:
    if specifier.endswith(":*"):  # the legacy prefix form: the command, then nothing or its arguments
        prefix = specifier[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" in specifier:
        return re.fullmatch(".*".join(re.escape(piece) for piece in specifier.split("*")), command,
                            re.DOTALL) is not None
    return command == specifier


def _commands(command: str) -> list[str]:
    """The command and each of its parts; `sudo`/`env` prefixes stay (a rule names what it asks about)."""
    parts = [part.strip() for part in _SHELL_OPERATORS.split(command) if part.strip()]
    return [command.strip(), *parts] if len(parts) > 1 else [command.strip()]


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

