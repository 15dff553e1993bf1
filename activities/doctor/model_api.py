"""The model API: the agent's (ANTHROPIC_BASE_URL, Codex's provider `base_url` or OPENAI_BASE_URL, or the
default), reached the way a sandboxed run reaches it. With SANDBOX_NETWORK=egress the egress proxy's
allow-list (isolator/egress_rules.py, as activities/sandbox/egress_hosts.py makes it for a run) must let it
through, and the doctor then asks it through a proxy of its own (activities/sandbox/egress_proxy.py); with
the network open, or SANDBOX=off, straight. Any HTTP answer below 500 is one: no key is sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpcore

from activities.doctor.check import TIMEOUT_SECONDS, Check
from activities.runs.agents import EXAMPLE_AGENT
from activities.runs.agents.configs import operators_folder
from activities.runs.queue import plan_for
from activities.sandbox.egress_hosts import entries_of_run
from activities.sandbox.egress_proxy import PROXY_PORT, open_egress
from isolator.egress_rules import Entry, Verdict, decide, parse_entry, url_entry
from isolator.settings import Settings

DEFAULTS = {"claude": "https://api.anthropic.com", "codex": "https://api.openai.com/v1"}


@dataclass(frozen=True)
class ModelApi:
    url: str
    named_by: str  # where the URL comes from: a variable, the agent's own configuration, or the default


async def model_api_checks(settings: Settings) -> list[Check]:
    """Nothing to check when no agent with a model API answers (the example agent, a command, a workflow)."""
    plan = plan_for(settings, None)
    if plan.kind != "command" or plan.driver not in ("claude", "codex", "aider") or plan.argv[0] == str(EXAMPLE_AGENT):
        return []
    api = model_api_of(plan.driver, settings.agent_home)
    if api is None:
        return []
    return [await reach(settings, api)]


def model_api_of(driver: str, agent_home: Path) -> ModelApi | None:
    """Where the driver's agent sends its requests; None for Aider without OPENAI_API_BASE (its model's
    provider decides)."""
    if driver == "aider":
        named = next((name for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL") if os.environ.get(name)), None)
        return ModelApi(os.environ[named], named) if named else None
    folder = operators_folder(driver, agent_home)
    if driver == "claude":
        if os.environ.get("ANTHROPIC_BASE_URL"):
            return ModelApi(os.environ["ANTHROPIC_BASE_URL"], "ANTHROPIC_BASE_URL")
        named = _read(lambda: json.loads((folder / "settings.json").read_text())["env"]["ANTHROPIC_BASE_URL"])
        if isinstance(named, str):
            return ModelApi(named, "ANTHROPIC_BASE_URL of Claude Code's settings.json")
        return ModelApi(DEFAULTS["claude"], "Claude Code's default")
    config = _read(lambda: tomllib.loads((folder / "config.toml").read_text())) or {}
    provider = config.get("model_provider") if isinstance(config, dict) else None
    base = _read(lambda: config["model_providers"][provider]["base_url"]) if provider else None
    if isinstance(base, str):
        return ModelApi(base, f"the `base_url` of Codex's provider `{provider}` (config.toml)")
    if os.environ.get("OPENAI_BASE_URL"):
        return ModelApi(os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL")
    return ModelApi(DEFAULTS["codex"], "Codex's default")


def _read(value: Any) -> Any:
    try:
        return value()
    except (OSError, ValueError, KeyError, TypeError):
        return None


async def reach(settings: Settings, api: ModelApi) -> Check:
    through_proxy = settings.sandbox == "on" and settings.sandbox_network == "egress"
    name = f"Model API: {api.url} ({api.named_by})" + (", through the egress proxy" if through_proxy else "")
    entry = url_entry(api.url)
    if entry is None:
        return Check.failed(name, "it is not an http(s) URL", f"correct {api.named_by}")
    host, port = entry.host, entry.port or (443 if api.url.lower().startswith("https") else 80)
    if settings.sandbox == "on" and settings.sandbox_network == "off":
        return Check.failed(name, "SANDBOX_NETWORK=off: a run reaches no host, its model API included",
                            "set SANDBOX_NETWORK=egress (the default), which lets the model API through")
    if not through_proxy:
        return _said(name, api, await _ask(api.url, None))
    entries = await entries_of_run(tuple(map(parse_entry, settings.sandbox_extra_hosts)), None,
                                   _agent_configs(settings.agent_home))
    verdict = await _verdict(entries, host, port)
    if verdict.address is None:
        fix = (f"point {api.named_by} elsewhere: a link-local or reserved address (the cloud's metadata) is never "
               "let through" if "link-local" in verdict.reason else
               f"name the port in {api.named_by} ({host}:{port}), or add `{host}:{port}` to SANDBOX_ALLOWED_HOSTS "
               "(docs/sandbox.md)")
        return Check.failed(name, f"the egress proxy refuses {host}:{port}: {verdict.reason}", fix)
    with tempfile.TemporaryDirectory(prefix="isolator-doctor-") as scratch:
        egress = await open_egress(entries, Path(scratch), "isolator doctor")
        try:
            answered = await _ask(api.url, egress.folder / "proxy.sock")
            if egress.connections:  # ending by themselves, both ends closed: a cancelled one is said on stderr
                await asyncio.wait(list(egress.connections), timeout=TIMEOUT_SECONDS)
        finally:
            await egress.close()
    return _said(name, api, answered)


def _said(name: str, api: ModelApi, answered: int | str) -> Check:
    if isinstance(answered, str):
        return Check.failed(name, f"it cannot be reached ({answered})",
                            f"start the model API, or correct {api.named_by}; check this machine's network")
    if answered >= 500:
        return Check.failed(name, f"it answers HTTP {answered}", "see the model API's status, then try again")
    return Check.passed(name, f"it answers (HTTP {answered} without a key)")


async def _ask(url: str, proxy_socket: Path | None) -> int | str:
    """The status of a GET of `url`, or what went wrong; through the proxy's socket when given."""
    timeouts = {"timeout": {"connect": TIMEOUT_SECONDS, "read": TIMEOUT_SECONDS, "write": TIMEOUT_SECONDS,
                            "pool": TIMEOUT_SECONDS}}
    context = ssl.create_default_context()
    pool: httpcore.AsyncConnectionPool = (
        httpcore.AsyncConnectionPool(ssl_context=context) if proxy_socket is None else
        httpcore.AsyncHTTPProxy(f"http://127.0.0.1:{PROXY_PORT}", ssl_context=context,
                                network_backend=_ThroughSocket(proxy_socket)))
    try:
        async with pool:
            response = await pool.request("GET", url, extensions=timeouts)
    except httpcore.ProxyError as error:  # the proxy answered CONNECT with its 502: the host is out of reach
        return f"the egress proxy answered {error}"
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError, OSError) as error:
        return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if response.status == 502 and proxy_socket is not None and b"could not be reached" in response.content:
        return response.content.decode(errors="replace").strip()  # the proxy's own 502, for a plain-http URL
    return response.status


class _ThroughSocket(httpcore.AnyIOBackend):
    """Every connection to the proxy goes to its Unix socket, as the sandbox's bridge sends a run's."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        return await self.connect_unix_socket(str(self.path), timeout=timeout)


def _agent_configs(agent_home: Path) -> tuple[Path, ...]:
    return tuple(folder for folder in (operators_folder("codex", agent_home), operators_folder("claude", agent_home))
                 if folder is not None)


async def _verdict(entries: tuple[Entry, ...], host: str, port: int) -> Verdict:
    """As the proxy decides (egress_proxy.py): named by an entry, then by the addresses the name resolves to."""
    if not any(entry.names(host, port) for entry in entries):
        return Verdict(None, "not on the allow-list")
    try:
        found = await asyncio.wait_for(asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM),
                                       TIMEOUT_SECONDS)
    except (OSError, asyncio.TimeoutError) as error:
        return Verdict(None, f"the name could not be looked up ({error})")
    return decide(entries, host, port, [str(info[4][0]) for info in found])
