"""One deployment, one behaviour: every process publishes a fingerprint of the settings that change what a
message does; one that differs is named (GET /api/hosts, `isolator doctor`), and an API with eager start
whose agent settings are missing does not answer the workers' messages."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from activities.doctor.fingerprints import NAME, fingerprint_checks
from isolator.settings import load_settings
from tests.agents import command
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from workflows.chat.agent_texts import no_agent


async def test_a_worker_whose_settings_differ_is_named_with_the_settings(make_cluster: MakeCluster) -> None:
    cluster = await make_cluster(host_env={"hostC": {"AGENT_TIMEOUT_MINUTES": "123.5"}})
    listed = (await cluster.api(1).get("/api/hosts")).json()
    assert [(p["kind"], p["host"], p["pid"], p["differs_in"]) for p in listed["differing"]] == [
        ("worker", "hostC", cluster.host("hostC").worker.pid, ["AGENT_TIMEOUT_MINUTES"])]
    hosts = {host["name"]: host for host in listed["hosts"]}
    assert hosts["hostC"]["workers"][0]["differs_in"] == ["AGENT_TIMEOUT_MINUTES"]
    assert hosts["hostA"]["workers"][0]["differs_in"] is None
    assert "123.5" not in str(listed), "a setting's value is never shown"
    page = (await cluster.api(0).get("/hosts")).text
    assert (f'<li class="process differing" data-host="hostC" data-pid="{cluster.host("hostC").worker.pid}">the worker '
            "of <strong>hostC</strong>") in page and "differs in AGENT_TIMEOUT_MINUTES" in page, page

    [check] = await fingerprint_checks(load_settings(database_url=cluster.database_url))
    assert check.name == NAME and not check.ok
    assert f"the worker of hostC ({socket.gethostname()}, pid {cluster.host('hostC').worker.pid}) differs in " \
           "AGENT_TIMEOUT_MINUTES" in check.problem, check


async def test_the_same_settings_everywhere_pass(make_cluster: MakeCluster) -> None:
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1)
    [check] = await fingerprint_checks(load_settings(database_url=cluster.database_url))
    assert check.ok and check.detail == "3 processes agree", check


async def test_an_eager_api_without_the_workers_agent_starts_no_message_itself(make_cluster: MakeCluster,
                                                                               tmp_path: Path) -> None:
    """The issue's case: an API with EAGER_START and no AGENT_* answered 6 of 6 messages "No coding agent"."""
    agent = {"AGENT_COMMAND": command("recorder", str(tmp_path / "runs.txt"), "0")}
    cluster = await make_cluster(
        hosts=["hostA", "hostB"], apis=2, env={"SANDBOX_WRITABLE_PATHS": str(tmp_path)},
        host_env={"hostA": agent, "hostB": agent},
        # This machine's own name: `isolator api` would host the shared queue's worker and start messages itself.
        api_env=[{"ISOLATOR_HOST": socket.gethostname(), "EAGER_START": "true"}, {}],
    )
    assert "EAGER_START refused: this API has no agent" in cluster.apis[0].process.log_text()
    apis = (await cluster.api(1).get("/api/hosts")).json()["apis"]
    assert {api["pid"]: api["runs_messages"] for api in apis} == {cluster.apis[0].process.pid: False,
                                                                  cluster.apis[1].process.pid: False}

    await cluster.register("hostA", make_repo(cluster.host("hostA").folder / "repos" / "project"))
    for number in range(6):
        await cluster.send(f"eager-{number}", f"task {number}", api=number % 2)
    for number in range(6):
        replies = await cluster.replies_when(f"eager-{number}", lambda texts: any("finished" in t for t in texts))
        assert no_agent() not in replies and f"finished task {number}" in replies[-1], replies


async def test_an_eager_api_stops_starting_messages_once_the_workers_settings_differ(make_cluster: MakeCluster) -> None:
    """Agreeing at its start, it hosts the shared queue's worker; workers restarted with another setting (a
    rolling deploy the API was left out of) make it stop, within seconds, and say why."""
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1,
                                 api_env=[{"ISOLATOR_HOST": socket.gethostname(), "EAGER_START": "true"}])
    api = cluster.apis[0].process
    assert "starting message workflows eagerly" in api.log_text()
    for name in ("hostA", "hostB"):
        cluster.host(name).worker.env["AGENT_TIMEOUT_MINUTES"] = "45"
        await cluster.restart(name)
    for _ in range(600):  # its guard compares every 2 s
        if "EAGER_START refused" in api.log_text():
            break
        await asyncio.sleep(0.1)
    assert "EAGER_START refused: this API's AGENT_TIMEOUT_MINUTES differ from the workers' of hostA" in api.log_text()
    [listed] = (await cluster.api(0).get("/api/hosts")).json()["apis"]
    assert listed["runs_messages"] is False and listed["differs_in"] == ["AGENT_TIMEOUT_MINUTES"]
