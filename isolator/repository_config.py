"""`.isolator.toml`: a repository's own set-up, read from its committed default branch at origin.

Pure: the text in, a RepositoryConfig or a ConfigProblem out. A problem names the file, the line and
what is wrong, so that the reply can say it; the worktree is still made, without set-up.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from isolator.approval_rules import RuleError, parse_rule
from isolator.automation_rules import read_automations
from isolator.contracts.automation import Automation, AutomationProblem
from isolator.contracts.repository import (
    CONFIG_FILE,
    ConfigProblem,
    RepositoryConfig,
    RepositorySetup,
    ResultsConfig,
)

_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_SECTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "setup": {"commands": list, "timeout_minutes": int, "warm": bool, "inputs": list},
    "teardown": {"commands": list, "timeout_minutes": int},
    "worktree": {"include": list, "submodules": bool, "lfs": str, "ports": int, "trust_forks": bool},
    "results": {"commit": bool, "push": bool, "pull_request": str, "branch_prefix": str, "autofix": bool},
    "approvals": {"ask": list, "deny": list},
}
LFS_MODES = ("fetch", "skip")
AUTOMATIONS = "automations"
PULL_REQUEST_MODES = ("draft", "ready", "off")
# A prefix of a branch name: `agent/`, `bot-`; checked whole by git when the branch is pushed.
_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,49}$")
MAX_PORTS = 100


def read_setup(text: str | None) -> RepositorySetup:
    """The set-up of a repository whose committed `.isolator.toml` is `text` (None: it has none)."""
    parsed = parse_repository_config(text) if text is not None else RepositoryConfig()
    if isinstance(parsed, ConfigProblem):
        return RepositorySetup(problem=parsed, found=True)
    return RepositorySetup(config=parsed, found=text is not None)


def parse_repository_config(text: str) -> RepositoryConfig | ConfigProblem:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = _LINE.search(str(error))
        reason = _LINE.sub("", str(error)).strip()
        return ConfigProblem(CONFIG_FILE, int(found.group(1)) if found else None, f"not valid TOML: {reason}")
    try:
        return _config(data)
    except _Invalid as invalid:
        return ConfigProblem(CONFIG_FILE, _line_of(text, invalid.section, invalid.key), invalid.reason)


class _Invalid(Exception):
    def __init__(self, section: str, key: str | None, reason: str) -> None:
        super().__init__(reason)
        self.section, self.key, self.reason = section, key, reason


def _config(data: dict[str, Any]) -> RepositoryConfig:
    for section, table in data.items():
        if section == AUTOMATIONS:  # `[[automations]]`: read on their own (isolator/automation_rules.py)
            continue
        if section not in _SECTIONS:
            raise _Invalid(section, None, f"unknown section `[{section}]` (known: {', '.join(_SECTIONS)}, "
                                          "`[[automations]]`)")
        if not isinstance(table, dict):
            raise _Invalid(section, None, f"`{section}` must be a table, `[{section}]`")
        for key, value in table.items():
            expected = _SECTIONS[section].get(key)
            if expected is None:
                known = ", ".join(_SECTIONS[section])
                raise _Invalid(section, key, f"unknown key `{section}.{key}` (known: {known})")
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise _Invalid(section, key, f"`{section}.{key}` must be {_kind(expected)}")
    setup, teardown, worktree, results = (data.get(name, {}) for name in ("setup", "teardown", "worktree", "results"))
    approvals = data.get("approvals", {})
    config = RepositoryConfig(
        setup_commands=_strings(setup, "setup", "commands"),
        setup_timeout_minutes=_positive(setup, "setup", "timeout_minutes", 15, limit=24 * 60),
        setup_warm=setup.get("warm", True),
        setup_inputs=_strings(setup, "setup", "inputs"),
        teardown_commands=_strings(teardown, "teardown", "commands"),
        teardown_timeout_minutes=_positive(teardown, "teardown", "timeout_minutes", 5, limit=24 * 60),
        include=_strings(worktree, "worktree", "include"),
        submodules=worktree.get("submodules", True),
        lfs=worktree.get("lfs", "fetch"),
        ports=_positive(worktree, "worktree", "ports", 10, limit=MAX_PORTS, zero=True),
        trust_forks=worktree.get("trust_forks", False),
        results=_results(results),
        approvals_ask=_rules(approvals, "ask"),
        approvals_deny=_rules(approvals, "deny"),
    )
    if config.lfs not in LFS_MODES:
        raise _Invalid("worktree", "lfs", f"`worktree.lfs` must be one of {', '.join(LFS_MODES)}")
    return config


def _rules(table: dict[str, Any], key: str) -> list[str]:
    """`[approvals] ask`/`deny`: Claude Code's rules (docs/approvals.md), each read now."""
    rules = _strings(table, "approvals", key)
    for rule in rules:
        try:
            parse_rule(rule)
        except RuleError as error:
            raise _Invalid("approvals", key, str(error)) from None
    return rules


def _results(table: dict[str, Any]) -> ResultsConfig:
    mode = table.get("pull_request", "draft")
    if mode not in PULL_REQUEST_MODES:
        raise _Invalid("results", "pull_request", f"`results.pull_request` must be one of {', '.join(PULL_REQUEST_MODES)}")
    prefix = table.get("branch_prefix", "")
    if prefix and (not _PREFIX.match(prefix) or ".." in prefix or "//" in prefix or prefix.endswith((".", ".lock"))):
        raise _Invalid("results", "branch_prefix", "`results.branch_prefix` must be the start of a branch name, "
                                                   "like `agent/` (letters, digits, `.`, `_`, `-`, `/`)")
    return ResultsConfig(commit=table.get("commit", True), push=table.get("push", True), pull_request=mode,
                         branch_prefix=prefix, autofix=table.get("autofix", True))


def _strings(table: dict[str, Any], section: str, key: str) -> list[str]:
    values = table.get(key, [])
    if not all(isinstance(value, str) and value.strip() and "\x00" not in value for value in values):
        raise _Invalid(section, key, f"`{section}.{key}` must be a list of non-empty strings")
    return list(values)


def _positive(table: dict[str, Any], section: str, key: str, default: int, limit: int, zero: bool = False) -> int:
    value = table.get(key, default)
    if value < (0 if zero else 1) or value > limit:
        raise _Invalid(section, key, f"`{section}.{key}` must be between {0 if zero else 1} and {limit}")
    return value


def _kind(expected: type | tuple[type, ...]) -> str:
    return {list: "a list", int: "a whole number", bool: "true or false", str: "a string"}.get(expected, "valid")  # type: ignore[call-overload]


def _line_of(text: str, section: str, key: str | None) -> int | None:
    """The line of `[section]`, or of `key` within it, for the reply."""
    in_section = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_section = stripped.strip("[] ") == section
            if in_section and key is None:
                return number
        elif in_section and key is not None and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
    return None


def read_repository_automations(text: str | None) -> list[Automation] | AutomationProblem:
    """`[[automations]]` of a committed `.isolator.toml` (none: an empty list)."""
    if text is None:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return AutomationProblem(None, None, f"`{CONFIG_FILE}` is not valid TOML: {error}")
    return read_automations(data.get(AUTOMATIONS, []), "repository")
