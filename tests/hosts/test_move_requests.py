"""What a move request is answered before anything starts (each mistake a 4xx with its reason; PATCH `host`
points to /move), and the codebase page's Move button, which moves the codebase to another host's worker."""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path

from isolator.payloads import connect
from tests.conftest import Stack
from tests.hosts.relocation import bare_origin, other_host
from workers.worker import running_workers


async def test_a_move_is_refused_with_its_reason_before_anything_starts(stack: Stack, repo: Path,
                                                                          tmp_path: Path) -> None:
    origin = bare_origin(tmp_path / "origin")
    by_url = (await stack.api.post("/api/codebases", json={"url": f"file://{origin}", "name": "cloned"})).json()
    by_path = await stack.register(repo)

    unknown = await stack.api.post(f"/api/codebases/{uuid.uuid4()}/move", json={"host": "hostC"})
    assert unknown.status_code == 404 and "no codebase" in unknown.json()["detail"], unknown.text
    nobody = await stack.api.post(f"/api/codebases/{by_url['id']}/move", json={"host": "nobody-runs-this"})
    assert nobody.status_code == 422, nobody.text
    assert "no worker of host `nobody-runs-this`" in nobody.json()["detail"]
    here = await stack.api.post(f"/api/codebases/{by_url['id']}/move", json={"host": stack.settings.host})
    assert here.status_code == 409 and "already" in here.json()["detail"], here.text
    no_url = await stack.api.post(f"/api/codebases/{by_path['id']}/move", json={"host": "hostC"})
    assert no_url.status_code == 409 and "without a URL" in no_url.json()["detail"], no_url.text
    for body in ({}, {"host": ""}, {"host": "two words"}, {"host": "a", "path": "/x"}):
        bad = await stack.api.post(f"/api/codebases/{by_url['id']}/move", json=body)
        assert bad.status_code == 422, (body, bad.text)
    patched = await stack.api.patch(f"/api/codebases/{by_url['id']}", json={"host": "hostC"})
    assert patched.status_code == 422 and "/move" in patched.text, patched.text
    rows = await stack.db.fetch("SELECT host, checkout_state FROM codebases")
    assert {(row["host"], row["checkout_state"]) for row in rows} == {(stack.settings.host, None)}


async def test_the_codebase_pages_move_button_moves_it_to_the_other_hosts_worker(stack: Stack,
                                                                                  tmp_path: Path) -> None:
    origin = bare_origin(tmp_path / "origin")
    registered = (await stack.api.post("/api/codebases", json={"url": f"file://{origin}", "name": "project"})).json()
    await stack.say("button", "/clone project")
    old = Path((await stack.say("button", "hello"))["result"]["workingPath"])
    (old / "draft.txt").write_text("not committed\n")
    other = other_host(stack.settings, tmp_path / "other")
    assert other.worktree_base != stack.settings.worktree_base

    # A client of its own: one client may not run two workers on the shared queue.
    async with running_workers(await connect(stack.settings.temporal_address), stack.db, other):
        origin.rename(origin.with_name("away.git"))  # the new host cannot clone it: nothing moves
        refused = await stack.api.post(f"/api/codebases/{registered['id']}/move", params={"wait": "true"},
                                       json={"host": other.host})
        assert refused.status_code == 409 and "could not clone" in refused.json()["detail"], refused.text
        row = await stack.db.fetchrow("SELECT host, checkout_state, checkout_note FROM codebases")
        assert (row["host"], row["checkout_state"]) == (stack.settings.host, None), dict(row)
        assert row["checkout_note"].startswith("a move was refused"), dict(row)
        origin.with_name("away.git").rename(origin)

        page = (await stack.api.get("/codebases/project")).text
        assert 'id="move-form"' in page and 'name="host"' in page
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None
        answer = await stack.api.post("/codebases/project/move", data={"csrf": csrf.group(1), "host": other.host},
                                      headers={"Origin": "http://isolator.test"})
        assert answer.status_code == 200 and f"Moving <code>project</code> to {other.host}" in answer.text, answer.text
        for _ in range(600):
            state = await stack.db.fetchval("SELECT checkout_state FROM codebases WHERE id = $1", registered["id"])
            if state == "moved":
                break
            await asyncio.sleep(0.1)
        assert state == "moved"
        moved_to = Path(await stack.db.fetchval("SELECT working_path FROM isolation_environments"))
        assert moved_to.is_relative_to(other.worktree_base) and (moved_to / "draft.txt").read_text() == "not committed\n"
        page = (await stack.api.get("/codebases/project")).text
        assert f"host {other.host}" in re.sub(r"<[^>]+>", "", page), "the page names the new host"
        assert 'id="checkout-state"' in page and "Checkout moved" in page
        refused = await stack.api.post("/codebases/project/move", data={"csrf": csrf.group(1), "host": other.host},
                                       headers={"Origin": "http://isolator.test"})
        assert "Not moved:" in refused.text and "already" in refused.text
    assert not old.exists(), "the old host's worktree goes once the move is done"
