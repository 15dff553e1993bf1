"""Hosts are known: each worker records its host's liveness, and `GET /api/hosts` and `/readyz` (through either
API) say which hosts are alive, which are silent and since when."""

from __future__ import annotations

import asyncio
import re
from typing import Callable

from tests.gitrepos import make_repo
from tests.hosts.cluster import Cluster


async def hosts_when(cluster: Cluster, ready: Callable[[dict[str, dict]], bool], api: int = 0,
                     seconds: float = 60) -> dict[str, dict]:
    """`GET /api/hosts`'s hosts by name, once `ready` holds for them."""
    hosts: dict[str, dict] = {}
    for _ in range(int(seconds * 10)):
        response = await cluster.api(api).get("/api/hosts")
        assert response.status_code == 200, response.text
        hosts = {host["name"]: host for host in response.json()["hosts"]}
        if ready(hosts):
            return hosts
        await asyncio.sleep(0.1)
    raise AssertionError(f"hosts: {hosts}")


async def test_every_host_its_workers_codebases_and_disk_through_either_api(cluster: Cluster) -> None:
    await cluster.register("hostB", make_repo(cluster.host("hostB").folder / "repos" / "project"))
    for api in (0, 1):
        hosts = await hosts_when(cluster, lambda hosts: set(hosts) == {"hostA", "hostB", "hostC"}, api)
        for name, host in hosts.items():
            assert host["alive"], host
            assert [worker["pid"] for worker in host["workers"]] == [cluster.host(name).worker.pid]
            assert host["disk_total_bytes"] >= host["disk_free_bytes"] > 0
        assert [host["codebases"] for host in hosts.values()] == [0, 1, 0]
    listed = (await cluster.api(1).get("/api/hosts")).json()
    assert sorted(api["pid"] for api in listed["apis"]) == sorted(api.process.pid for api in cluster.apis)
    assert listed["differing"] == [] and listed["fingerprint"]


async def test_a_killed_host_is_silent_since_its_last_beat_and_alive_again_after_its_restart(cluster: Cluster) -> None:
    await cluster.register("hostB", make_repo(cluster.host("hostB").folder / "repos" / "project"))
    cluster.kill("hostB")
    hosts = await hosts_when(cluster, lambda hosts: not hosts["hostB"]["alive"], api=1)
    assert hosts["hostA"]["alive"] and hosts["hostC"]["alive"]
    assert hosts["hostB"]["last_seen"] is not None
    ready = await cluster.api(0).get("/readyz")
    assert ready.status_code == 200, "a silent host does not make the API unready"
    lines = ready.json()["hosts"]
    assert lines["hostA"] == lines["hostC"] == "alive (1 worker)"
    assert lines["hostB"].startswith("silent since ") and lines["hostB"].endswith(" UTC"), lines
    page = (await cluster.api(1).get("/hosts")).text  # the dashboard's hosts page
    assert re.search(r'<tr class="host silent" data-host="hostB">.*?silent since ', page, re.S), page
    assert page.count('<tr class="host alive"') == 2
    overview = (await cluster.api(0).get("/")).text
    assert f"{lines['hostB']}: its messages wait" in overview, overview
    assert f"{lines['hostB']}: its messages wait" in (await cluster.api(1).get("/codebases/project")).text

    await cluster.restart("hostB")
    hosts = await hosts_when(cluster, lambda hosts: hosts["hostB"]["alive"], api=0)
    assert [worker["pid"] for worker in hosts["hostB"]["workers"]] == [cluster.host("hostB").worker.pid]
    assert (await cluster.api(1).get("/readyz")).json()["hosts"]["hostB"] == "alive (1 worker)"


async def test_a_stopped_host_is_silent_at_once(cluster: Cluster) -> None:
    assert await cluster.terminate("hostC") == 0
    response = await cluster.api(0).get("/api/hosts")  # no wait: its clean stop is recorded
    hosts = {host["name"]: host for host in response.json()["hosts"]}
    assert not hosts["hostC"]["alive"] and hosts["hostC"]["workers"][0]["stopped_at"] is not None
    assert hosts["hostA"]["alive"]


async def test_status_names_the_codebases_host_and_that_it_is_alive(cluster: Cluster) -> None:
    for name in ("hostA", "hostB"):
        await cluster.register(name, make_repo(cluster.host(name).folder / "repos" / f"project-{name}"))
    await cluster.say("status-b", "/clone project-hostB", api=1)
    await cluster.say("status-b", "/status", api=0)
    replies = await cluster.replies("status-b", api=1)
    assert sum("\nHost: hostB, alive\n" in text for text in replies) == 1, replies
