"""The GitHub App set up in one page (the dashboard's manifest flow) against the fake GitHub: the page, the
manifest posted to GitHub, the redirect with a code, its conversion, the App stored encrypted with
ISOLATOR_SECRET_KEY, then used with no restart by a reply and a webhook's verification; and the
`installation` / `installation_repositories` events."""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import uuid
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from activities.chat.platforms.github import make_deliverer
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, SENDER, URL, issues_event
from tests.results import eventually

PUBLIC = "https://isolator.example"


async def post_signed(stack: Stack, event: str, payload: dict[str, Any], secret: str) -> httpx.Response:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return await stack.api.post("/webhooks/github", content=body, headers={
        "content-type": "application/json", "x-github-event": event, "x-github-delivery": str(uuid.uuid4()),
        "x-hub-signature-256": signature})


class TestManifest:
    @pytest.fixture
    def settings(self, settings: Settings) -> Settings:
        """No token, no App, no webhook secret: only what the page will store."""
        return settings.model_copy(update={"github_token": None, "github_webhook_secret": None, "public_url": PUBLIC,
                                           "isolator_secret_key": SecretStr(Fernet.generate_key().decode())})

    async def test_page_redirect_code_conversion_stored_encrypted_then_used(self, stack: Stack,
                                                                            fake: FakeGitHub) -> None:
        overview = await stack.api.get("/")
        assert '<a href="/connect/github">Connect GitHub</a>' in overview.text
        page = await stack.api.get("/connect/github")
        assert page.status_code == 200, page.text
        assert f"form-action 'self' {fake.api_url}" in page.headers["content-security-policy"]
        action = html.unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
        manifest = html.unescape(re.search(r'name="manifest" value="([^"]+)"', page.text).group(1))
        sent = json.loads(manifest)
        assert sent["hook_attributes"]["url"] == f"{PUBLIC}/webhooks/github"
        assert sent["redirect_url"] == "http://isolator.test/connect/github/callback"
        assert sent["default_permissions"]["contents"] == "write" and sent["default_permissions"]["checks"] == "read"
        assert {"issue_comment", "pull_request_review", "workflow_run"} <= set(sent["default_events"])

        async with httpx.AsyncClient() as browser:  # the browser posts the form to GitHub
            created = await browser.post(action, data={"manifest": manifest})
        assert created.status_code == 302
        back = created.headers["location"].removeprefix("http://isolator.test")
        (app,) = fake.apps.apps.values()
        forged = await stack.api.get(back.replace("state=", "state=x"))
        assert forged.status_code == 400 and "not started from this dashboard" in forged.text
        assert await stack.db.fetchval("SELECT count(*) FROM github_apps") == 0

        done = await stack.api.get(back)
        assert done.status_code == 303, done.text
        again = await stack.api.get(back)
        assert again.status_code == 400 and "GitHub answered 404" in again.text, "a code is good once"
        row = await stack.db.fetchrow("SELECT app_id, slug, secrets FROM github_apps")
        assert (row["app_id"], row["slug"]) == (app.app_id, app.slug)
        sealed = bytes(row["secrets"])
        assert b"PRIVATE KEY" not in sealed and app.webhook_secret.encode() not in sealed, "stored encrypted"
        shown = await stack.api.get("/connect/github?connected=1")
        assert f"<strong>{app.slug}</strong>" in shown.text

        installation = fake.apps.install(app, REPO)
        fake.add_issue(REPO, 5)
        await make_deliverer(stack.settings)(ReplyInput("github", f"{REPO}#5", "hello from the App", "m1"))
        assert [(comment.body, comment.author) for comment in fake.comments] == [("hello from the App",
                                                                                  f"{app.slug}[bot]")]
        assert fake.apps.requests_for(installation) == 1

        payload = {**issues_event("opened", 5, f"@{app.slug} hi"), "installation": {"id": installation}}
        refused = await post_signed(stack, "issues", payload, "some other secret")
        assert refused.status_code == 401
        accepted = await post_signed(stack, "issues", payload, app.webhook_secret)
        assert accepted.status_code == 202, accepted.text

    async def test_without_a_secret_key_the_page_says_how_to_make_one(self, stack: Stack) -> None:
        stack.settings.isolator_secret_key = None
        page = await stack.api.get("/connect/github")
        assert "isolator secret-key" in page.text and 'id="manifest-form"' not in page.text


def repositories_event(action: str, installation: int, added: list[str], removed: list[str]) -> dict[str, Any]:
    def listed(names: list[str]) -> list[dict[str, Any]]:
        return [{"id": index, "full_name": name, "name": name.split("/")[1], "private": False}
                for index, name in enumerate(names, 1)]
    return {"action": action, "installation": {"id": installation}, "repository_selection": "selected",
            "repositories_added": listed(added), "repositories_removed": listed(removed), "sender": SENDER}


async def test_installation_events_record_register_and_mark_removed(stack: Stack, repo: Any, fake: FakeGitHub,
                                                                    settings: Settings) -> None:
    secret = settings.github_webhook_secret.get_secret_value()
    codebase = await stack.register(repo, url=URL)
    added = await post_signed(stack, "installation_repositories", repositories_event("added", 77, [REPO], []), secret)
    assert added.json() == {"status": "recorded", "added": [REPO], "removed": [], "registering": [], "told": 0}
    assert await stack.db.fetchval("SELECT github_installation_id FROM codebases WHERE id = $1::uuid",
                                   codebase["id"]) == 77

    stack.settings.github_auto_register = True
    new = "octo-org/brand-new"
    answer = await post_signed(stack, "installation", {**repositories_event("created", 77, [], []),
                                                       "repositories": [{"id": 5, "full_name": new}]}, secret)
    (workflow_id,) = answer.json()["registering"]
    await eventually(lambda: _started(stack, workflow_id), "the registration of the added repository")
    assert await stack.db.fetchval("SELECT installation_id FROM github_installations WHERE repository = $1",
                                   new) == 77

    await stack.say("chat-on-it", "hello")  # a chat conversation working in the repository's codebase
    removed = await post_signed(stack, "installation_repositories", repositories_event("removed", 77, [], [REPO]),
                                secret)
    assert removed.json()["removed"] == [REPO] and removed.json()["told"] == 1
    again = await post_signed(stack, "installation", {**repositories_event("deleted", 77, [], []),
                                                      "repositories": [{"id": 1, "full_name": REPO}]}, secret)
    assert again.json()["told"] == 0, "told once"
    told = [text for text in await stack.replies("chat-on-it") if "taken out of" in text]
    assert told == [f"The GitHub App was taken out of `{REPO}`: the service can no longer push to it or open pull "
                    "requests there. Add the repository to the App's installation again to carry on."]
    assert await stack.db.fetchval("SELECT removed_at IS NOT NULL FROM github_installations WHERE repository = "
                                   "lower($1)", REPO)
    assert await stack.db.fetchval("SELECT github_installation_id FROM codebases WHERE id = $1::uuid",
                                   codebase["id"]) is None


async def _started(stack: Stack, workflow_id: str) -> bool:
    await stack.temporal.get_workflow_handle(workflow_id).describe()
    return True
