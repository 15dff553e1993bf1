"""A request a run made of a person, answered from its page on the dashboard in a real browser (issue 47,
item 3), with the real Claude Code against the fake Anthropic API: the Asked table offers the request's own
answers; the logged-in user is the operator, and the answer is recorded, said in chat and told to the
agent as given by the operator from the dashboard; a second answer from a stale page is refused."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx

from api.approvals import OPERATOR
from isolator.contracts.approvals import press_value
from tests.approvals import (  # noqa: F401 - claude: the fixture
    approval,
    claude,
    recorded_request,
    request_of,
    runs_when_ended,
    waiting_for_answer,
)
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text


async def test_the_operator_answers_a_request_from_the_runs_page(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = f"dash-ask-{uuid.uuid4().hex[:6]}"
    claude.then(run("touch asked.txt"), run("touch asked.txt"), text("Touched it."))
    first = (await stack.say(talk, "touch asked.txt please", user="alice"))["result"]
    asked = await request_of(stack, talk)
    await waiting_for_answer(stack, first["environmentId"])

    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        page.set_default_timeout(60_000)
        await page.goto(f"{base}/runs/{first['agentRunId']}")
        row = f"#approvals tr[data-code='{asked['code']}']"
        labels = [label.strip() for label in await page.locator(f"{row} button").all_text_contents()]
        assert labels == ["Allow once", "Allow for this conversation", "Deny"], labels
        assert OPERATOR in await page.text_content(row)
        stale = await browser.new_page()  # a second tab, opened before the answer
        await stale.goto(f"{base}/runs/{first['agentRunId']}")

        await page.click(f"{row} button:has-text('Allow once')")
        assert "Allowed once" in (await page.text_content("#outcome") or "")
        runs = await runs_when_ended(stack, talk, 2)
        assert [item["status"] for item in runs] == ["waiting", "done"]
        assert (Path(first["workingPath"]) / "asked.txt").exists(), "allowed, the command ran"
        answered = await approval(stack, asked["code"])
        assert (answered["state"], answered["answered_by"]) == ("allowed", OPERATOR)
        assert f"{OPERATOR} approved this call" in claude.conversation_texts(len(claude.calls) - 2)
        assert any(asked["code"] in reply and f"Allowed once by {OPERATOR}" in reply
                   for reply in await stack.replies(talk))

        await stale.click(f"{row} button:has-text('Deny')")
        refused = await stale.text_content("#outcome") or ""
        assert f"already allowed by {OPERATOR}" in refused, refused
        await page.goto(f"{base}/runs/{first['agentRunId']}")
        await until(page, f"document.querySelector(\"{row}\").textContent.includes('allowed by')")
        assert await page.locator(f"{row} button").count() == 0, "answered: no buttons any more"


async def test_a_form_that_names_no_answer_of_the_request_is_refused_with_its_reason(stack: Stack) -> None:
    await recorded_request(stack.db, "test", "dash-bad", "BADFORM1", requested_by="alice")
    run_id = await stack.db.fetchval("SELECT run_id FROM approvals WHERE code = 'BADFORM1'")
    async with served(stack) as base, httpx.AsyncClient(base_url=base, headers={"Origin": base}) as client:
        page = (await client.get(f"/runs/{run_id}")).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        path = f"/runs/{run_id}/approvals/BADFORM1"

        assert (await client.post(path, data={"answer": press_value("BADFORM1", "once")})).status_code == 403
        forged = await client.post(path, data={"csrf": csrf, "answer": press_value("OTHER123", "once")})
        assert forged.status_code == 400 and "names no answer of this request" in forged.text
        elsewhere = await client.post(f"/runs/{uuid.uuid4()}/approvals/BADFORM1", data={"csrf": csrf})
        assert elsewhere.status_code == 404
        wrong_kind = await client.post(path, data={"csrf": csrf, "answer": press_value("BADFORM1", "approve")})
        assert "does not answer this request" in wrong_kind.text
        empty = await client.post(path, data={"csrf": csrf, "answer": press_value("BADFORM1", "text")})
        assert "write the answer in the field first" in empty.text
    assert (await approval(stack, "BADFORM1"))["state"] == "pending"
