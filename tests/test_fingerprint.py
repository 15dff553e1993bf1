"""A process's fingerprint: the settings that change what a message does, hashed, and only those."""

from __future__ import annotations

from isolator.fingerprint import agent_of, behaviour_settings, differing_settings, fingerprint_of
from isolator.settings import load_settings


def test_it_covers_the_agent_sandbox_approvals_results_and_autofix_and_not_a_hosts_capacity() -> None:
    covered = set(behaviour_settings().values())
    assert {"AGENT", "AGENT_COMMAND", "AGENT_APPROVALS", "APPROVAL_TIMEOUT_HOURS", "SANDBOX", "SANDBOX_MEMORY_MB",
            "RESULTS", "RESULTS_COMMITTER", "AUTOFIX", "AUTOFIX_MAX_ATTEMPTS"} <= covered
    assert "AGENT_MAX_CONCURRENT" not in covered and "GITHUB_TOKEN" not in covered and "ISOLATOR_HOST" not in covered


def test_a_difference_changes_it_and_is_named_without_its_value() -> None:
    same = fingerprint_of(load_settings(agent_command_line="my-agent --fast", host="hostA"))
    assert same == fingerprint_of(load_settings(agent_command_line="my-agent --fast", host="hostB",
                                                agent_max_concurrent=16, github_token="ghp_secret"))
    other = fingerprint_of(load_settings(agent_command_line="my-agent --slow"))
    assert other.digest != same.digest
    assert differing_settings(other.parts, same.parts) == ["AGENT_COMMAND"]
    assert "my-agent" not in repr(other) and "--slow" not in repr(other)


def test_the_agent_it_would_run() -> None:
    assert agent_of(load_settings()) is None
    assert agent_of(load_settings(agent_command_line="my-agent")) == "command"
    assert agent_of(load_settings(agent_driver="claude")) == "claude"
