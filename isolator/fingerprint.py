"""A process's fingerprint: a hash of the settings that change what a message does, so that the processes of
one deployment can be compared without any of them showing a setting's value.

The settings are the agent's (`AGENT*`, `APPROVAL_TIMEOUT_HOURS`), the sandbox's (`SANDBOX*`), the
results' (`RESULTS*`) and the loop after a PR's (`AUTOFIX*`). `AGENT_MAX_CONCURRENT` is left out: it is a
host's capacity, which may rightly differ between machines. Secrets are never part of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from isolator.settings import Settings

BEHAVIOUR_PREFIXES = ("AGENT", "APPROVAL", "SANDBOX", "RESULTS", "AUTOFIX")
PER_HOST = frozenset({"AGENT_MAX_CONCURRENT"})


@dataclass(frozen=True)
class Fingerprint:
    digest: str  # of all the behaviour settings together
    parts: dict[str, str]  # each setting's variable name -> a hash of its value: which ones differ


def behaviour_settings() -> dict[str, str]:
    """Field name -> variable name of each setting the fingerprint covers."""
    covered = {}
    for field_name, info in Settings.model_fields.items():
        alias = info.validation_alias
        variable = alias.choices[0] if alias is not None and hasattr(alias, "choices") else str(alias)
        if isinstance(variable, str) and variable.startswith(BEHAVIOUR_PREFIXES) and variable not in PER_HOST:
            covered[field_name] = variable
    return covered


def fingerprint_of(settings: Settings) -> Fingerprint:
    parts = {}
    for field_name, variable in sorted(behaviour_settings().items(), key=lambda item: item[1]):
        value = getattr(settings, field_name)
        if isinstance(value, SecretStr):
            continue
        parts[variable] = _hash(_canonical(value))[:12]
    return Fingerprint(_hash(json.dumps(parts, sort_keys=True))[:16], parts)


def agent_of(settings: Settings) -> str | None:
    """Which agent this process would run for a message: its driver, a team's workflow, or None (no agent)."""
    if settings.agent_workflow:
        return f"workflow {settings.agent_workflow}"
    if settings.agent_driver:
        return settings.agent_driver
    return "command" if settings.agent_command_line else None


def differing_settings(parts: dict[str, str], expected: dict[str, str]) -> list[str]:
    """The variables whose value differs between two fingerprints' parts."""
    return sorted(name for name in set(parts) | set(expected) if parts.get(name) != expected.get(name))


def _canonical(value: Any) -> str:
    if isinstance(value, (set, frozenset)):
        value = sorted(value)
    return json.dumps(value, sort_keys=True, default=str)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
