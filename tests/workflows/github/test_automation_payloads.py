"""GitHub's events as automations' triggers, from real payloads (octokit's examples, in
tests/fixtures/github_events/): each kind fires the automation naming it once, however often GitHub
delivers it (before its firing ends and after), and an event that is not the one named fires nothing.

Real Temporal, PostgreSQL and git, the events signed and delivered to the webhook as GitHub does, and a
small real agent (tests/agents/changer.py); the report place is the test adapter's `test:<conversation>`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.service import RPCError, RPCStatusCode

from isolator.automation_events import github_event_fields, matches_github
from isolator.automation_rules import read_automation
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import URL, deliver

EVENTS = Path(__file__).parents[2] / "fixtures" / "github_events"


def payload(name: str, **changes: Any) -> dict[str, Any]:
    """The example, with a sender id of its own (the Temporal server outlives one test) and `changes`
    (`check_suite__conclusion`: a nested field)."""
    loaded = json.loads((EVENTS / f"{name}.json").read_text())
    loaded["sender"]["id"] = uuid.uuid4().int % 10**9
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = loaded
        for parent in parents:
            target = target[parent]
        target[last] = value
    return loaded


def _failed(kind: str, branch: str) -> dict[str, Any]:
    return payload(f"{kind}.completed", **{f"{kind}__conclusion": "failure", f"{kind}__head_branch": branch})


# (automation, its trigger, the event's header, the payload that fires it)
FIRING = [
    ("opened", "github:issues.opened", "issues", lambda: payload("issues.opened")),
    ("labelled-bug", "github:issues.labeled:bug", "issues", lambda: payload("issues.labeled")),
    ("pr-opened", "github:pull_request.opened", "pull_request", lambda: payload("pull_request.opened")),
    ("pr-ready", "github:pull_request.ready_for_review", "pull_request",
     lambda: payload("pull_request.ready_for_review")),
    ("pushed", "github:push:master", "push", lambda: payload("push.branch")),
    ("suite-red", "github:check_suite.failed:changes", "check_suite", lambda: _failed("check_suite", "changes")),
    ("run-red", "github:workflow_run.failed:master", "workflow_run", lambda: _failed("workflow_run", "master")),
    ("released", "github:release.published", "release", lambda: payload("release.published")),
]
# Events that fire none of them: a label not named, green runs, a push to another branch, a tag deleted.
QUIET = [
    ("issues", lambda: payload("issues.labeled", label={"id": 1, "name": "wontfix", "color": "ffffff"})),
    ("check_suite", lambda: payload("check_suite.completed")),
    ("check_suite", lambda: _failed("check_suite", "other")),
    ("workflow_run", lambda: payload("workflow_run.completed")),
    ("push", lambda: payload("push.branch", ref="refs/heads/feature")),
    ("push", lambda: payload("push.tag_deleted")),
]


def _firing_id(name: str, event: str, sent: dict[str, Any]) -> str:
    """The firing's workflow id: the event's own digest (api/platforms/github/automations.py)."""
    digest = hashlib.sha256(json.dumps([event, sent], sort_keys=True).encode()).hexdigest()[:20]
    return f"automation:{name}:{digest}"


async def _exists(stack: Stack, workflow_id: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def test_each_event_kind_fires_its_automation_once_and_others_fire_nothing(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    codebase = (await stack.register(repo, url=URL))["name"]
    for name, trigger, _, _ in [*FIRING, ("labelled-agent", "github:issues.labeled:agent", "", None)]:
        made = await stack.api.post("/api/automations", json={
            "name": name, "codebase": codebase, "on": [trigger], "report": "test:github-events",
            "prompt": "{{ event.kind }} {{ event.action }}: {{ event.title }}"})
        assert made.status_code == 201, made.text

    fired: dict[str, str] = {}
    for name, _, event, make in FIRING:  # one at a time: each firing's run ends before the next event
        sent = make()
        fired[name] = _firing_id(name, event, sent)
        for _ in range(2):  # GitHub's redelivery: a new delivery id, the same event
            delivered, _ = await deliver(stack, event, copy.deepcopy(sent))
            assert delivered.status_code == 202, (name, delivered.text)  # a check suite's starts the PR loop too
        handle = stack.temporal.get_workflow_handle(fired[name])
        assert (await handle.result())["state"] == "done", name
        ran = (await handle.describe()).run_id
        late, _ = await deliver(stack, event, sent)  # redelivered after its firing ended: nothing more
        assert late.status_code == 202 and (await handle.describe()).run_id == ran, name
    for event, make in QUIET:
        sent = make()
        quiet, _ = await deliver(stack, event, sent)
        assert quiet.status_code in (200, 202), (event, quiet.text)
        assert not [name for name, _, _, _ in FIRING if await _exists(stack, _firing_id(name, event, sent))], event

    firings = await stack.db.fetch("SELECT automation, state FROM automation_firings ORDER BY automation")
    assert sorted((row["automation"], row["state"]) for row in firings) == sorted((name, "done") for name in fired)
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs WHERE platform = 'automation'") == len(FIRING)
    replies = await stack.replies("github-events")
    assert sum("finished" in reply for reply in replies) == len(FIRING), replies
    release = next(reply for reply in replies if "`released` finished" in reply)
    assert "<untrusted-input>0.0.1</untrusted-input>" in release, "an unnamed release is called by its tag"


@pytest.mark.parametrize(("trigger", "event", "make"), [(t, e, m) for _, t, e, m in FIRING])
def test_the_real_payload_matches_its_trigger_and_no_other(trigger: str, event: str, make: Any) -> None:
    sent = make()
    for _, other, other_event, _ in FIRING:
        read = read_automation({"name": "a", "on": [other], "prompt": "p", "report": "test:x"}, "api")
        assert matches_github(read.triggers[0], event, sent) is (other == trigger), (trigger, other)
    fields = github_event_fields(event, sent)
    assert fields["repository"] == "octo-org/hello-world" and fields["title"], fields


@pytest.mark.parametrize(("event", "make"), QUIET)
def test_a_quiet_payload_matches_none(event: str, make: Any) -> None:
    sent = make()
    for _, trigger, _, _ in FIRING:
        read = read_automation({"name": "a", "on": [trigger], "prompt": "p", "report": "test:x"}, "api")
        assert not matches_github(read.triggers[0], event, sent), trigger


def test_a_push_of_any_branch_is_a_branch_s_new_commits_never_a_tag_or_a_deletion() -> None:
    any_push = read_automation({"name": "a", "on": ["github:push"], "prompt": "p", "report": "test:x"}, "api")
    assert matches_github(any_push.triggers[0], "push", payload("push.branch", ref="refs/heads/feature"))
    assert not matches_github(any_push.triggers[0], "push", payload("push.tag_deleted"))
    deleted = payload("push.branch", deleted=True, after="0" * 40)
    assert not matches_github(any_push.triggers[0], "push", deleted)
