"""Per platform, how much of an agent's progress the streamed message shows."""

from __future__ import annotations

import asyncio

from activities.runs.answer import AnswerStream
from activities.runs.verbosity import MAX_STEPS_SHOWN, shows_steps_only, steps_view
from isolator.contracts.message import ReplyInput


def test_github_shows_steps_and_chats_show_the_running_lines() -> None:
    assert shows_steps_only("github", streams_events=True)
    for chat in ("slack", "telegram", "discord", "test"):
        assert not shows_steps_only(chat, streams_events=True)


def test_a_plain_text_agents_output_is_its_answer_everywhere() -> None:
    assert not shows_steps_only("github", streams_events=False)


def test_steps_are_bullets_without_repeats() -> None:
    assert steps_view([]) == ""
    assert steps_view(["edited `a.py`", "ran `make` (exit 0)", "edited `a.py`", " "]) == (
        "• edited `a.py`\n• ran `make` (exit 0)")


def test_a_long_list_keeps_its_latest_steps_and_counts_the_rest() -> None:
    steps = [f"ran `step {n}` (exit 0)" for n in range(MAX_STEPS_SHOWN + 2)]
    lines = steps_view(steps).split("\n")
    assert lines[0] == "• … and 2 earlier steps"
    assert lines[-1] == f"• ran `step {MAX_STEPS_SHOWN + 1}` (exit 0)"
    assert len(lines) == MAX_STEPS_SHOWN + 1


def test_the_stream_shows_steps_and_the_working_line_then_the_final_answer_alone() -> None:
    sent: list[ReplyInput] = []

    async def say(reply: ReplyInput) -> None:
        sent.append(reply)

    async def scenario() -> None:
        answer = AnswerStream(say, "github", "o/r#1", "run-1", steps_only=True)
        answer.add("Fresh session.\n")
        answer.steps(["wrote `notes.txt`"])
        answer.working("⏳ _Working… 10 s so far._")
        await answer.flush()
        answer.steps(["wrote `notes.txt`", "ran `ls` (exit 0)"])
        answer.working("")
        await answer.flush()
        answer.replace("• wrote `notes.txt`\n\nDone.\n")
        await answer.finish("✅ finished", "more")

    asyncio.run(scenario())
    texts = [reply.text for reply in sent]
    assert texts[:2] == [
        "Fresh session.\n\n• wrote `notes.txt`\n\n⏳ _Working… 10 s so far._",
        "Fresh session.\n\n• wrote `notes.txt`\n• ran `ls` (exit 0)",
    ]
    assert texts[-1] == "• wrote `notes.txt`\n\nDone.\n\n✅ finished"
