"""Row 11: DNS rebinding. A page on another site whose name now resolves to this machine sends its
requests with that name in `Host` (and `Origin`): every route refuses them with 400, so the page reads no
dashboard page, takes no CSRF token and runs no action. This server's own names pass."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.conftest import Stack

REBOUND = "rebind.attacker.example:8000"
PUBLIC = "isolator.example.org"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={
        "public_url": f"https://{PUBLIC}/",
        "allowed_hosts": "isolator.test, Dash.Example.Net, ops.example.net:8443",
        "github_webhook_secret": SecretStr("unused-secret"),
    })


def host(name: str) -> dict[str, str]:
    return {"Host": name, "Origin": f"http://{name}"}


async def test_a_foreign_host_is_refused_on_every_route(stack: Stack) -> None:
    answers = {
        "api": await stack.api.get("/api/codebases", headers=host(REBOUND)),
        "page": await stack.api.get("/cleanup/run", headers=host(REBOUND)),
        "form post": await stack.api.post("/cleanup/run", data={"csrf": "taken"}, headers=host(REBOUND)),
        "login": await stack.api.post("/login", data={"token": "x"}, headers=host(REBOUND)),
        "webhook": await stack.api.post("/webhooks/github", content=b"{}", headers=host(REBOUND)),
        "health": await stack.api.get("/healthz", headers=host(REBOUND)),
        "static": await stack.api.get("/static/dashboard.css", headers=host(REBOUND)),
        "a port on a host listed with another": await stack.api.get("/", headers=host("ops.example.net:9000")),
        "a name ending in a listed one": await stack.api.get("/", headers=host("evil-dash.example.net")),
        "not a port": await stack.api.get("/", headers=host("localhost:80@rebind.attacker.example")),
    }
    for what, answer in answers.items():
        assert answer.status_code == 400 and "Host" in answer.json()["detail"], (what, answer.text)
    assert "csrf" not in answers["page"].text
    own = await stack.api.get("/cleanup/run")
    assert own.status_code == 200 and 'name="csrf"' in own.text, "the same page, asked under this server's name"


async def test_this_server_s_own_names_pass(stack: Stack) -> None:
    names = ["localhost:8000", "localhost", "127.0.0.1:18000", "[::1]:8000", "LOCALHOST.", PUBLIC, f"{PUBLIC}:443",
             "dash.example.net", "dash.example.net:1234", "ops.example.net:8443", "isolator.test"]
    for name in names:
        page = await stack.api.get("/", headers=host(name))
        assert page.status_code == 200, (name, page.text[:300])
        assert (await stack.api.get("/api/codebases", headers=host(name))).status_code == 200, name
