"""Results, the pure part: which branch may be pushed, the commit's message and author, where the
token may go, and `.isolator.toml [results]`."""

from __future__ import annotations

import pytest

from activities.results.commit_and_push import commit_message, credential_target
from isolator.contracts.agent import AgentPlan
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.repository import ConfigProblem, ResultsConfig
from isolator.contracts.results import PullRequestRef
from isolator.repository_config import parse_repository_config
from isolator.results_rules import agent_author, kind_of, push_refusal, remote_branch

CODEBASE = Codebase("c1", "project", "/checkout", "main", "host")


def environment(workflow_type: str = "issue", branch: str = "issue-42", fork: bool = False) -> EnvironmentRef:
    return EnvironmentRef("e1", CODEBASE, "/worktrees/project/x", branch, workflow_type, "42", from_fork=fork)


def test_each_conversation_kind_delivers_its_own_way() -> None:
    assert kind_of(environment("issue")) == "issue"
    assert kind_of(environment("pr", "feature/x")) == "pull_request"
    assert kind_of(environment("pr", "pr-42-review", fork=True)) == "fork"
    assert kind_of(environment("thread", "thread-1a2b3c4d")) == "chat"
    assert kind_of(environment("task", "task-x")) == "chat"


def test_the_prefix_applies_to_new_issue_branches_only() -> None:
    assert remote_branch(environment(), None, "agent/") == "agent/issue-42"
    recorded = PullRequestRef("o/r", 1, "u", "issue-42", "main")
    assert remote_branch(environment(), recorded, "agent/") == "issue-42", "an existing PR keeps its branch"
    assert remote_branch(environment("thread", "thread-1"), None, "agent/") == "thread-1"


@pytest.mark.parametrize("branch, remote, checked_out, reason", [
    ("issue-42", "issue-42", "issue-42", None),
    ("issue-42", "agent/issue-42", "issue-42", None),
    ("issue-42", "issue-42", "main", "the worktree is on `main`, not on its own branch `issue-42`"),
    ("issue-42", "issue-42", None, "a detached HEAD"),
    ("main", "main", "main", "the default branch"),
    ("issue-42", "main", "issue-42", "the default branch"),
    ("issue-42", "release", "issue-42", "is not this environment's branch"),
])
def test_only_the_environments_own_branch_is_pushed(branch: str, remote: str, checked_out: str | None,
                                                    reason: str | None) -> None:
    refusal = push_refusal(environment(branch=branch), remote, "main", checked_out, None, "agent/")
    assert refusal is None if reason is None else reason in (refusal or "")


def test_the_commit_message_is_the_first_line_and_a_trailer() -> None:
    assert commit_message("\n  Fix   the login  \nmore", "github:o/r#42", "run-1") == (
        "Fix the login\n\nIsolator-Conversation: github:o/r#42\nIsolator-Run: run-1\n")
    assert commit_message("", "test:c", None) == "Work from test:c\n\nIsolator-Conversation: test:c\n"
    assert len(commit_message("x" * 200, "test:c", None).splitlines()[0]) == 72


def test_the_author_is_the_agent() -> None:
    assert agent_author(AgentPlan("command", ["claude", "-p"]))[0] == "Claude Code"
    assert agent_author(AgentPlan("command", ["/usr/bin/python3", "/opt/agents/review.py"]))[0] == "review agent"
    assert agent_author(AgentPlan("workflow", workflow="TeamAgent"))[0] == "TeamAgent agent"


@pytest.mark.parametrize("url, target", [
    ("https://github.com/o/r.git", ("https", "github.com")),
    ("https://user@github.com/o/r", ("https", "github.com")),
    ("http://127.0.0.1:8080/r.git", ("http", "127.0.0.1:8080")),
    ("http://example.com/r.git", None),  # the token would travel in clear
    ("git@github.com:o/r.git", None),  # ssh: the service's keys, no token
    ("/srv/git/r.git", None),
])
def test_the_token_goes_only_over_https(url: str, target: tuple[str, str] | None) -> None:
    assert credential_target(url) == target


def test_the_results_section_of_isolator_toml() -> None:
    parsed = parse_repository_config('[results]\ncommit = false\npush = true\npull_request = "ready"\n'
                                      'branch_prefix = "agent/"\n')
    assert not isinstance(parsed, ConfigProblem)
    assert parsed.results == ResultsConfig(commit=False, push=True, pull_request="ready", branch_prefix="agent/")
    assert parse_repository_config("").results == ResultsConfig()  # type: ignore[union-attr]
    bad = parse_repository_config('[results]\npull_request = "sometimes"\n')
    assert isinstance(bad, ConfigProblem) and bad.line == 2 and "draft, ready, off" in bad.reason
    prefix = parse_repository_config('[results]\nbranch_prefix = "../x"\n')
    assert isinstance(prefix, ConfigProblem) and "branch_prefix" in prefix.reason
