"""Reading Discord's payloads and texts: pure functions, no service needed."""

from __future__ import annotations

import pytest

from activities.chat.platforms.discord import MAX_TEXT
from activities.chat.replies import split_text
from api.platforms.discord.events import (
    MalformedInteraction,
    NotForUs,
    Ping,
    SlashCommand,
    as_chat_text,
    read_interaction,
    strip_bot_mentions,
    thread_name,
)
from isolator.contracts.discord import interaction_key, interaction_of

COMMANDS = frozenset({"status", "worktree", "help", "clone", "stop"})


def command(text: str | None, **fields: object) -> dict[str, object]:
    options = [] if text is None else [{"name": "text", "type": 3, "value": text}]
    return {"type": 2, "id": "1200000000000000001", "application_id": "1100000000000000009", "token": "aW50ZXJhY3Rpb24.x-_",
            "channel_id": "1300000000000000001", "data": {"id": "1", "name": "isolator", "type": 1, "options": options},
            "user": {"id": "1400000000000000001", "username": "ada"}, **fields}


def test_a_ping_is_a_ping_and_the_slash_command_is_read_with_its_channel_as_the_conversation() -> None:
    assert read_interaction({"type": 1}, COMMANDS) == Ping()
    read = read_interaction(command("worktree list"), COMMANDS)
    assert read == SlashCommand("1200000000000000001", "1100000000000000009", "aW50ZXJhY3Rpb24.x-_",
                                "1300000000000000001", "/worktree list", user_id="1400000000000000001")
    assert (read.conversation_id, read.message_key) == ("1300000000000000001", "interaction:1200000000000000001")
    in_channel_object = command("fix it", channel_id=None, channel={"id": "1300000000000000002", "type": 11})
    assert read_interaction(in_channel_object, COMMANDS).conversation_id == "1300000000000000002"


@pytest.mark.parametrize(("text", "chat_text"), [
    ("status", "/status"), ("Worktree remove --force x", "/Worktree remove --force x"), ("", "/help"),
    (None, "/help"), ("/stop", "/stop"), ("fix the login bug", "fix the login bug"), ("  help me  ", "/help me"),
])
def test_command_words_become_chat_commands_and_other_text_is_a_message(text: str | None, chat_text: str) -> None:
    assert read_interaction(command(text), COMMANDS).text == chat_text
    if text is not None:
        assert as_chat_text(text, COMMANDS) == chat_text


def test_other_interactions_are_not_taken_and_bad_shapes_say_what_is_wrong() -> None:
    assert isinstance(read_interaction({"type": 3, "data": {}}, COMMANDS), NotForUs)
    assert isinstance(read_interaction(command("x", data={"name": "other"}), COMMANDS), NotForUs)
    for bad, reason in [
        ([], "JSON object"),
        (command("x", data=None), "`data`"),
        (command("x", id=12), "`id`"),
        (command("x", channel_id="../1"), "`channel_id`"),
        (command("x", token="a/b"), "`token`"),
        (command("x", data={"name": "isolator", "options": {"text": "x"}}), "`data.options`"),
        (command("x", data={"name": "isolator", "options": [{"name": "text", "value": 3}]}), "string"),
    ]:
        with pytest.raises(MalformedInteraction, match=reason):
            read_interaction(bad, COMMANDS)


def test_interaction_keys_are_told_from_message_ids() -> None:
    assert interaction_of(interaction_key("42")) == "42"
    assert interaction_of("1234567890") is None and interaction_of(None) is None


def test_mentions_of_the_bot_are_stripped_and_a_thread_is_named_after_the_first_line() -> None:
    assert strip_bot_mentions("<@110> /status", 110) == "/status"
    assert strip_bot_mentions("hey <@!110>, fix <@220> tests", 110) == "hey fix <@220> tests"
    assert thread_name("\n  fix the login bug \nmore") == "fix the login bug"
    assert thread_name("") == "isolator"
    assert len(thread_name("x" * 500)) == 100


def test_long_replies_are_split_within_discords_limit_at_line_ends_when_there_are_some() -> None:
    lines = "\n".join(f"line {n:04}" for n in range(500))
    parts = split_text(lines, MAX_TEXT)
    assert "".join(parts) == lines and all(len(part) <= 2000 for part in parts) and len(parts) == 3
    assert all(part.endswith("\n") for part in parts[:-1])
    unbroken = "y" * 4500
    assert [len(part) for part in split_text(unbroken, MAX_TEXT)] == [2000, 2000, 500]
    assert split_text("", MAX_TEXT) == [""] and split_text("short", MAX_TEXT) == ["short"]
