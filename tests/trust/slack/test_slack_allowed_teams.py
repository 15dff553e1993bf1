"""SLACK_ALLOWED_TEAMS and SLACK_ALLOWED_USERS: an event delivered for a workspace not listed is refused,
and so is a person not listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.platforms.slack import USER, app_mention, event_callback, new_ts, post_signed, resolution
from tests.trust.checks import nothing_changed


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"slack_allowed_teams": frozenset({"T0OTHER0001"}),
                                       "slack_allowed_users": frozenset({USER})})


async def deliver_for(stack: Stack, event: dict, team: str) -> None:
    """The event as Slack delivers it for an installation in `team`."""
    payload = event_callback(event)
    payload["team_id"] = payload["authorizations"][0]["team_id"] = team
    response = await post_signed(stack, payload)
    assert response.status_code == 200, response.text


async def test_only_the_listed_workspaces_and_people_are_taken(stack: Stack, fake: FakeSlack, repo: Path) -> None:
    await stack.register(repo)
    unlisted_team = app_mention(new_ts(), f"<@{BOT_USER_ID}> fix it")
    await deliver_for(stack, unlisted_team, TEAM_ID)
    unlisted_person = {**app_mention(new_ts(), f"<@{BOT_USER_ID}> fix it"), "user": "U0SOMEONE1"}
    await deliver_for(stack, unlisted_person, "T0OTHER0001")
    assert (await resolution(stack, unlisted_team["ts"])).replies == [
        f"I only take requests from the workspaces I am set up for. To allow yours, add its id `{TEAM_ID}` to "
        "`SLACK_ALLOWED_TEAMS`."]
    assert (await resolution(stack, unlisted_person["ts"])).replies == [
        "I only take requests from the people in `SLACK_ALLOWED_USERS`. To allow you, add your user id "
        "`U0SOMEONE1` to it."]
    await nothing_changed(stack, repo)

    listed = app_mention(new_ts(), f"<@{BOT_USER_ID}> fix it")
    await deliver_for(stack, listed, "T0OTHER0001")
    assert (await resolution(stack, listed["ts"])).outcome == "created"
