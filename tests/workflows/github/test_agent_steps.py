"""On GitHub, the agent's one edited comment shows a compact list of its steps while it works, never
its running text lines; the final answer is the same as in chats. Real git, PostgreSQL, Temporal and
the example agent (which speaks Claude Code's events), against the fake GitHub API."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, URL
from tests.results import final_message, say_on_issue

EXAMPLE_AGENT = str(Path(__file__).resolve().parents[3] / "examples" / "agent.py")


async def test_an_issue_comment_lists_the_agents_steps_not_its_text_lines(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    fake.add_issue(REPO, 7, title="Keep notes")
    await stack.register(repo, url=URL, agent={"agent": "claude", "executable": EXAMPLE_AGENT})
    run_id = await say_on_issue(stack, 7, "@isolator remember the milk", opened=True)
    final = await final_message(stack.db, run_id, "— Done")
    assert final.startswith("• wrote `NOTES.md`\n• ran `git status --short` (exit 0)\n\nI took a note")

    bodies = [comment.body for comment in fake.comments] + [body for _, body in fake.edits]
    progress = [body for body in bodies if "• wrote `NOTES.md`" in body and "— Done" not in body]
    assert progress, f"the steps are shown while the agent works: {bodies}"
    assert not any("Working on:" in body for body in bodies), "the agent's running text stays out of GitHub"
