"""The dashboard's Doctor page: what `isolator doctor` finds, checked when the page is opened, the failed
checks first with their fixes, what the platforms said escaped; in process and in a real browser (Debian's
chromium) against a real server, with Telegram's fake Bot API saying its webhook fails."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram

HOSTILE = "<script>window.injected = 1</script><b>bold</b>"


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    fake.webhook.update(url="https://isolator.example.org/webhooks/telegram", pending_update_count=5,
                        last_error_date=1764300000, last_error_message=f"Wrong response from the webhook: {HOSTILE}")
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, telegram: FakeTelegram) -> Settings:
    """Telegram by a webhook set by hand (no PUBLIC_URL), which Telegram cannot deliver to."""
    return settings.model_copy(update={"telegram_bot_token": SecretStr(BOT_TOKEN), "telegram_api_url": telegram.api_url,
                                       "telegram_webhook_secret": SecretStr("webhook-secret_1")})


async def test_the_doctor_page_shows_the_problems_first_with_their_fixes(stack: Stack) -> None:
    overview = await stack.api.get("/")
    page = await stack.api.get("/doctor")

    assert page.status_code == 200, page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert '<a href="/doctor">Doctor</a>' in overview.text
    problems, passed = page.text.split('id="problems"')[1].split('id="passed"')
    assert 'class="problem" id="problems-heading"' in page.text
    assert "Telegram: TELEGRAM_BOT_TOKEN" in problems and "5 update(s) waiting" in problems
    assert "make PUBLIC_URL/webhooks/telegram reachable from Telegram" in problems  # its fix, beside it
    assert "PostgreSQL: DATABASE_URL" in passed and "Temporal: TEMPORAL_ADDRESS" in passed
    assert "<script>window.injected" not in page.text and "&lt;b&gt;bold&lt;/b&gt;" in page.text
    assert BOT_TOKEN not in page.text


async def test_the_doctor_page_in_a_browser(stack: Stack, telegram: FakeTelegram) -> None:
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/")
        await page.click("text=Doctor")
        await page.wait_for_selector("#problems tr.check")
        rows = await page.eval_on_selector_all(
            "tr.check", "rows => rows.map(row => [row.dataset.ok, row.cells[0].textContent.trim()])")
        fix = await page.text_content("#problems tr.check td.fix")
        injected = await page.evaluate("window.injected === undefined")
        telegram.webhook.pop("last_error_message")  # mended: the page says so when opened again
        await page.reload()
        await page.wait_for_selector("#passed")
        after = await page.evaluate("(document.getElementById('problems') || {textContent: ''}).textContent")

    assert rows[0] == ["false", "Telegram: TELEGRAM_BOT_TOKEN (getMe, getWebhookInfo)"], rows
    assert [ok for ok, _ in rows] == sorted(ok for ok, _ in rows), "the failed checks come first"
    assert any(name.startswith("PostgreSQL") and ok == "true" for ok, name in rows), rows
    assert fix is not None and "TELEGRAM_WEBHOOK_SECRET" in fix
    assert injected
    assert "Telegram" not in after, after  # this machine's sandbox may lack a part: only Telegram's is asked
