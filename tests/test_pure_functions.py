"""Unit tests of the pure helpers: branch names, commands, repository URLs, paths, settings, the run queue and
which message answers a question."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from activities.git.runner import is_valid_branch_name
from activities.git.paths import (
    UnsafePathError,
    ensure_inside,
    is_valid_codebase_name,
    worktree_path,
)
from isolator.contracts.agent import AgentPlan, RunRequest
from isolator.contracts.environment import EnvironmentRef, EnvironmentState
from isolator.repositories import (
    is_clone_url,
    looks_like_path,
    name_from_source,
    normalize_repository_url,
)
from isolator.settings import ConfigurationError, load_settings
from workflows.chat.commands import parse_command
from workflows.environment_approvals import answers_question
from workflows.environment_runs import Runs
from workflows.naming import branch_for, thread_branch, thread_identity


def test_thread_branch_is_the_first_eight_hex_digits_of_the_sha256() -> None:
    assert thread_branch("C123:1700000000.000100") == "thread-" + hashlib.sha256(b"C123:1700000000.000100").hexdigest()[:8]
    assert thread_branch("a") != thread_branch("b")


def test_branch_for_each_workflow_type() -> None:
    assert branch_for("thread", "x") == thread_branch("x")
    assert branch_for("issue", "42") == "issue-42"
    with pytest.raises(ValueError):
        branch_for("unheard-of", "1")


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("/help", "help", []),
        ("/STATUS", "status", []),
        ("@isolator /clone https://example.com/o/r", "clone", ["https://example.com/o/r"]),
        ("/status@isolator_bot", "status", []),
        ("/frobnicate now", "unknown", ["now"]),
    ],
)
def test_commands_are_recognised_after_mentions(text: str, name: str, args: list[str]) -> None:
    command = parse_command(text)
    assert command is not None
    assert (command.name, command.args) == (name, args)


@pytest.mark.parametrize("text", ["fix the bug", "@isolator please look", "", "/", "a /status in the middle"])
def test_ordinary_messages_are_not_commands(text: str) -> None:
    assert parse_command(text) is None


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("https://github.com/o/r.git", "https://github.com/o/r"),
        ("https://github.com/o/r/", "https://github.com/o/r"),
        ("https://github.com/o/r.git/", "https://github.com/o/r"),
        ("git@github.com:o/r.git", "git@github.com:o/r"),
        (" https://github.com/o/r \n", "https://github.com/o/r"),
    ],
)
def test_repository_urls_are_normalised(url: str, normalised: str) -> None:
    assert normalize_repository_url(url) == normalised


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("https://github.com/o/r", True),
        ("ssh://git@host/o/r", True),
        ("git@github.com:o/r.git", True),
        ("file:///srv/repos/r", True),
        ("ext::sh -c touch% /tmp/pwned", False),  # would run a command
        ("--upload-pack=touch /tmp/pwned", False),  # would be read as an option
        ("https://host/o/r with space", False),
        ("not a url", False),
        ("", False),
    ],
)
def test_only_plain_clone_urls_are_accepted(value: str, accepted: bool) -> None:
    assert is_clone_url(value) is accepted


def test_paths_are_told_apart_from_urls() -> None:
    assert looks_like_path("/srv/repo") and looks_like_path("~/repo") and looks_like_path("./repo")
    assert not looks_like_path("https://github.com/o/r")


def test_default_codebase_names() -> None:
    assert name_from_source("https://github.com/owner/project.git", None) == "project"
    assert name_from_source("git@github.com:owner/project.git", None) == "project"
    assert name_from_source(None, "/srv/code/project/") == "project"


@pytest.mark.parametrize("name", ["project", "my.repo", "a_b-c", "x" * 100])
def test_usable_codebase_names(name: str) -> None:
    assert is_valid_codebase_name(name)


@pytest.mark.parametrize("name", ["", ".hidden", "../up", "a/b", "a..b", "-flag", "x" * 101, "sp ace"])
def test_unusable_codebase_names(name: str) -> None:
    assert not is_valid_codebase_name(name)


def test_worktree_paths_stay_inside_the_base(tmp_path: Path) -> None:
    base = tmp_path / "worktrees"
    assert worktree_path(base, "project", "feature/x") == base.resolve() / "project" / "feature-x"
    for branch in ["..", ".", "", ".hidden"]:
        with pytest.raises(UnsafePathError):
            worktree_path(base, "project", branch)
    with pytest.raises(UnsafePathError):
        worktree_path(base, "..", "main")


def test_ensure_inside_sees_through_symlinks(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "escape").symlink_to(tmp_path)
    with pytest.raises(UnsafePathError):
        ensure_inside(base, base / "escape" / "elsewhere")
    with pytest.raises(UnsafePathError):
        ensure_inside(base, base)
    assert ensure_inside(base, base / "a" / "b") == base.resolve() / "a" / "b"


@pytest.mark.parametrize("name", ["thread-1a2b3c4d", "issue-42", "feature/x", "pr-7-review"])
async def test_git_accepts_branch_names(name: str) -> None:
    assert await is_valid_branch_name(name)


@pytest.mark.parametrize("name", ["-delete", "a..b", "a b", "a~1", "end.lock", "a:b", "", "x/", "@", "HEAD", "a@{b"])
async def test_git_refuses_branch_names(name: str) -> None:
    assert not await is_valid_branch_name(name)


def test_settings_defaults_live_under_the_data_dir(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "state")
    assert settings.workspace_path == tmp_path / "state" / "workspace"
    assert settings.worktree_base == tmp_path / "state" / "worktrees"
    assert settings.host_task_queue("box") == "isolation@box"


def test_a_bad_setting_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_WORKTREES_PER_CODEBASE", "many")
    with pytest.raises(ConfigurationError, match="MAX_WORKTREES_PER_CODEBASE"):
        load_settings()


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_TOKEN", "")
    monkeypatch.setenv("MAX_WORKTREES_PER_CODEBASE", "")
    settings = load_settings()
    assert settings.api_token is None
    assert settings.max_worktrees_per_codebase == 25


def test_secrets_never_appear_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s3cret-value")
    monkeypatch.setenv("API_TOKEN", "t0ken-value")
    text = repr(load_settings())
    assert "s3cret-value" not in text and "t0ken-value" not in text


def test_a_threads_identity_names_its_platform() -> None:
    assert thread_identity("slack", "C1:2") == "slack:C1:2"
    assert thread_branch(thread_identity("slack", "x")) != thread_branch(thread_identity("test", "x"))


def request(key: str, conversation: str = "test:c", answers: str | None = None) -> RunRequest:
    return RunRequest(f"run-{key}", key, conversation, "hello", AgentPlan("command", ["agent"]), user="alice",
                      answers=answers)


def environment_state() -> EnvironmentState:
    return EnvironmentState(EnvironmentRef("e1", "project", "/worktrees/project/x", "x", "thread", "c", "test"))


def test_a_run_that_has_ended_is_not_counted_ahead_while_its_results_are_delivered() -> None:
    runs = Runs(environment_state())
    runs.state.running = request("first")
    assert runs.queue(request("second")).ahead == 1
    runs.finishing = True  # it said "Done"; the service commits and pushes its work
    assert runs.queue(request("third")).ahead == 1, "only the queued run before it"
    assert runs.queue(request("first")) == runs.queue(request("first")) and runs.state.runs[-1].key == "third", \
        "a retried hand-off of the running run is not queued again"


def test_a_reply_to_a_question_before_the_run_that_asked_has_ended_is_held_for_its_wait() -> None:
    state = environment_state()
    state.running = request("asking")
    assert not answers_question(state, request("unrelated")), "a message that answers nothing queues"
    assert not answers_question(state, request("elsewhere", "test:other", answers="a1")), "another conversation's"
    assert answers_question(state, request("reply", answers="a1")) and state.early_answer == request("reply", answers="a1")
    assert answers_question(state, request("reply", answers="a1")), "a retried hand-off is the same reply"
    assert not answers_question(state, request("second", answers="a1")), "one reply is the answer, the next queues"
