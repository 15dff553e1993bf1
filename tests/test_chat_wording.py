"""The words of chat replies that a newcomer reads first: checked as text, without a stack."""

from __future__ import annotations

from isolator.contracts.agent_session import SessionSummary
from workflows.chat import session_texts, texts


def test_help_keeps_each_paragraph_on_one_line() -> None:
    # Chat platforms keep a message's line breaks: a break inside a sentence shows as a ragged line.
    for line in texts.HELP.splitlines():
        assert not line or line.startswith(("`/", "Commands:")) or line.endswith("."), line


def test_status_names_the_working_directory_only_when_it_is_not_the_worktree() -> None:
    same = texts.status("shop", "/w/shop/issue-1", "/w/shop/issue-1", "issue-1").splitlines()
    assert same == ["Codebase: shop", "Worktree: `/w/shop/issue-1` (branch `issue-1`)"]
    other = texts.status("shop", "/w/shop/issue-1/sub", "/w/shop/issue-1", "issue-1").splitlines()
    assert other[1] == "Current working directory: /w/shop/issue-1/sub"
    assert texts.status("shop", None, None, None).splitlines()[1] == "Worktree: none (your next message makes one)"
    assert texts.status(None, None, None, None).splitlines() == ["Codebase: none (use `/clone`)", "Worktree: none"]


def test_a_reset_says_what_the_session_cost_or_used() -> None:
    paid = SessionSummary(True, "claude", 3, "2026-11-28T09:00:00", 0.25, 12_500)
    assert session_texts.reset(paid).endswith("had 3 turns and cost $0.25 · 12.5k tokens.")
    tokens_only = SessionSummary(True, "codex", 1, "2026-11-28T09:00:00", 0.0, 738)
    assert session_texts.reset(tokens_only).endswith("had 1 turn and used 738 tokens.")
