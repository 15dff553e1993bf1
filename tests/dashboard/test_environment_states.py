"""What the dashboard says of an environment's state, against the whole stack (real git, PostgreSQL,
Temporal): the service's own refused removal is a state of its own on every page, with its reason and
since when, until a forced removal goes through, and a person's refused removal is none; the action's
answers are the dashboard's own words (no chat backticks, no REST advice); the environment page measures
its disk when opened."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from isolator.merge_words import NO_WORK_YET, merged_cell, merged_words
from tests.conftest import Stack
from tests.removals import close_unreadable
from tests.results import eventually


async def _worktree(stack: Stack, conversation: str) -> dict:
    stack.settings.agent_command_line = ""  # a worktree without a run
    return (await stack.say(conversation))["result"]


async def _post_form(stack: Stack, path: str, **fields: str) -> str:
    """A dashboard form, posted as the browser posts it: with the session's CSRF token, from this origin."""
    page = await stack.api.get("/cleanup/run")  # any page with a form carries the token
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None, page.text
    answer = await stack.api.post(path, data={"csrf": csrf.group(1), **fields},
                                  headers={"Origin": "http://isolator.test"})
    assert answer.status_code == 200, answer.text
    return answer.text


async def _post(stack: Stack, path: str, **fields: str) -> str:
    """An action's outcome, as its page says it."""
    answer = await _post_form(stack, path, **fields)
    found = re.search(r'id="outcome">(.*?)</p>', answer, re.S)
    assert found is not None, answer
    return found.group(1)


async def test_a_persons_refused_removal_says_what_to_do_and_is_no_state(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    dirty = await _worktree(stack, "states-dirty")
    Path(dirty["workingPath"], "notes.txt").write_text("unsaved work\n")
    environment_id, branch = dirty["environmentId"], dirty["branch"]

    refused = await _post(stack, f"/environments/{environment_id}/remove")

    assert refused.startswith("Not removed:") and "uncommitted changes" in refused, refused
    assert f"<code>{branch}</code>" in refused and "`" not in refused, "code spans, not chat's backticks"
    assert "remove it anyway with the button below" in refused and "every hour" not in refused
    assert "DELETE /api" not in refused and "curl" not in refused and "/worktree" not in refused
    overview = (await stack.api.get("/")).text
    assert "1 active" in overview and "0 removal refused" in overview, overview
    page = (await stack.api.get(f"/environments/{environment_id}")).text
    assert "removal refused" not in page, "nothing waits: a person's refused removal ends there"


async def test_the_services_refused_removal_is_a_state_with_its_reason_until_forced(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    closed = await _worktree(stack, "states-closed")
    clean = await _worktree(stack, "states-clean")
    pointer = await close_unreadable(stack, "states-closed", closed)  # its last conversation closed: the service's
    environment_id, branch = closed["environmentId"], closed["branch"]

    async def shown_refused() -> bool:
        page = await stack.api.get("/codebases/project")
        return f'data-environment="{environment_id}" data-state="refused"' in page.text
    await eventually(shown_refused, "the codebase page shows the removal refused")

    codebase = (await stack.api.get("/codebases/project")).text
    row = re.search(rf'<tr data-environment="{environment_id}".*?</tr>', codebase, re.S)
    assert row is not None and "removal refused" in row.group(0)
    assert re.search(r"git cannot read it, since \d{4}-\d\d-\d\d \d\d:\d\d UTC", row.group(0)), row.group(0)
    assert "tried again every hour, until a message in one of its conversations cancels it" in row.group(0)
    assert "Force ticked" in row.group(0)
    only_refused = (await stack.api.get("/codebases/project", params={"state": "refused"})).text
    only_active = (await stack.api.get("/codebases/project", params={"state": "active"})).text
    assert environment_id in only_refused and clean["environmentId"] not in only_refused
    assert clean["environmentId"] in only_active and environment_id not in only_active
    overview = (await stack.api.get("/")).text
    assert "1 active" in overview and "1 removal refused" in overview, overview
    page = (await stack.api.get(f"/environments/{environment_id}")).text
    assert 'id="state">removal refused' in page and "git cannot read it, since" in page, page

    Path(closed["workingPath"], ".git").write_text(pointer)  # repaired: now it can be archived
    forced = await _post(stack, f"/environments/{environment_id}/remove", force="on")

    assert forced.startswith(f"<code>{branch}</code> was removed.") and "`" not in forced, forced
    assert "archived as <code>refs/isolator/archive/" in forced and "/worktree" not in forced
    recorded = await stack.db.fetchrow("SELECT status, removal_reason FROM isolation_environments WHERE id = $1",
                                       uuid.UUID(environment_id))
    assert dict(recorded) == {"status": "destroyed", "removal_reason": "removed from the dashboard"}
    overview = (await stack.api.get("/")).text
    assert "0 removal refused" in overview


async def test_set_up_and_a_clean_removal_answer_in_dashboard_words_recorded_as_from_the_dashboard(
        stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    clean = await _worktree(stack, "states-goes")

    set_up = await _post(stack, f"/environments/{clean['environmentId']}/setup")
    removed = await _post(stack, f"/environments/{clean['environmentId']}/remove")

    assert set_up.startswith(f"The set-up of <code>{clean['branch']}</code>") and "`" not in set_up, set_up

    assert removed.startswith(f"<code>{clean['branch']}</code> was removed."), removed
    assert not Path(clean["workingPath"]).exists()
    reason = await stack.db.fetchval("SELECT removal_reason FROM isolation_environments WHERE id = $1",
                                     uuid.UUID(clean["environmentId"]))
    assert reason == "removed from the dashboard"


async def test_the_environment_page_measures_its_disk_and_the_others_say_when_they_will_be(
        stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    measured = await _worktree(stack, "states-disk")
    other = await _worktree(stack, "states-later")

    page = (await stack.api.get(f"/environments/{measured['environmentId']}")).text

    disk = re.search(r'id="disk">(.*?)</dd>', page, re.S)
    assert disk is not None and re.search(r"\d+(\.\d+)? [KMG]iB, measured just now", disk.group(1)), page
    recorded = await stack.db.fetchval("SELECT disk_bytes FROM isolation_environments WHERE id = $1",
                                       uuid.UUID(measured["environmentId"]))
    assert recorded and recorded > 0
    codebase = (await stack.api.get("/codebases/project")).text
    row = re.search(rf'<tr data-environment="{other["environmentId"]}".*?</tr>', codebase, re.S)
    assert row is not None and ">not measured yet</td>" in row.group(0)
    assert codebase.count("the next scheduled cleanup measures every worktree") == 1, "said once, not on every row"
    overview = (await stack.api.get("/")).text
    assert "1 not measured yet" in overview and "the next scheduled cleanup measures every worktree" in overview


def test_the_merge_fact_is_worded_once_for_chat_and_the_dashboard() -> None:
    proof = "its tip is an ancestor of `main`"
    assert merged_words(proof, fresh=True) == NO_WORK_YET and merged_cell(proof, fresh=True) != "yes"
    assert merged_words(proof, fresh=False) == f"yes, {proof}" and merged_cell(proof, fresh=False) == "yes"
    assert merged_words(None, fresh=False) == "no, it has work of its own" and merged_cell(None, fresh=False) == "no"


# One source for both: the wording (isolator/merge_words.py) and the fact (a fresh branch is not merged).
async def test_a_fresh_branch_is_never_merged_yes_on_the_dashboard(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    fresh = await _worktree(stack, "states-fresh")
    await _post_form(stack, "/cleanup/run")  # the scheduled cleanup: it records merge proofs and sizes

    codebase = (await stack.api.get("/codebases/project")).text
    page = (await stack.api.get(f"/environments/{fresh['environmentId']}")).text

    row = re.search(rf'<tr data-environment="{fresh["environmentId"]}".*?</tr>', codebase, re.S)
    assert row is not None and 'class="merged" title="">' in row.group(0) and "would be removed" not in row.group(0)
    assert f"Merged: {NO_WORK_YET}" in page and "Merged: yes" not in page, page
    assert "no work of its own yet (so nothing to merge)" in page and "not merged" not in page
