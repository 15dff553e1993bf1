"""Quoting user text back into a chat: what the user typed stays recognisable, and nothing in it acts."""

from workflows.chat.texts import quoted_safely
from workflows.chat.worktree_texts import invalid_task_name


def test_control_and_direction_characters_are_shown_escaped() -> None:
    assert quoted_safely("esc\x1b[31m") == "esc\\x1b[31m"
    assert quoted_safely("bell\x07name\n") == "bell\\x07name\\n"
    assert quoted_safely("\u202eevil") == "\\u202eevil"


def test_backticks_cannot_end_the_code_span_and_long_names_are_cut() -> None:
    assert quoted_safely("`id`") == "'id'"
    assert quoted_safely("x" * 300) == "x" * 60 + "…"
    assert quoted_safely("fine-name_1.2") == "fine-name_1.2"


def test_the_refusal_quotes_the_name_safely() -> None:
    reply = invalid_task_name("a\x1b[2Jb")
    assert reply.startswith("`a\\x1b[2Jb` cannot be a worktree name.") and reply.isprintable()
