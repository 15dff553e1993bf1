"""`.isolator.toml [setup] warm` and `inputs`, and the pool's line in the chat: pure functions."""

from __future__ import annotations

from isolator.contracts.repository import ConfigProblem, RepositoryConfig
from isolator.contracts.warm import WarmPoolView, WarmWorktreeView
from isolator.repository_config import parse_repository_config


def test_warm_and_inputs_are_read_with_their_defaults() -> None:
    config = parse_repository_config('[setup]\ncommands = ["npm ci"]\nwarm = false\ninputs = ["package-lock.json"]\n')
    assert isinstance(config, RepositoryConfig)
    assert config.setup_warm is False and config.setup_inputs == ["package-lock.json"]
    default = parse_repository_config('[setup]\ncommands = ["npm ci"]\n')
    assert isinstance(default, RepositoryConfig) and default.setup_warm is True and default.setup_inputs == []


def test_a_wrong_warm_or_inputs_is_named_with_its_line() -> None:
    problem = parse_repository_config('[setup]\nwarm = "no"\n')
    assert isinstance(problem, ConfigProblem) and problem.line == 2 and "`setup.warm` must be true or false" in problem.reason
    problem = parse_repository_config('[setup]\ncommands = []\ninputs = [""]\n')
    assert isinstance(problem, ConfigProblem) and problem.line == 3 and "`setup.inputs`" in problem.reason


def test_the_pool_line_says_what_is_ready_and_why_not() -> None:
    assert WarmPoolView(0).describe() == ""
    view = WarmPoolView(2, [WarmWorktreeView("/w/a", "ready", "abcdef123"),
                            WarmWorktreeView("/w/b", "failed", "abcdef123", "`make` exited with code 2")])
    assert view.describe() == ("Warm worktrees: 1 of 2 ready at `abcdef1` (1 failed)\n"
                               "  warm set-up failed: `make` exited with code 2")
