"""Where a sandboxed program may connect with SANDBOX_NETWORK=egress (pure; the proxy that applies it is
activities/sandbox/egress_proxy.py).

An entry is `host` (ports 80 and 443), `host:port`, `*.domain` (its subdomains) or `*` (the whole
public internet). Whatever the entry, the address a name resolves to decides too: a public address is
reachable; a loopback or private one only through an entry that names its port (an operator's choice,
as a model API on the host's loopback); a link-local one (169.254.0.0/16, where clouds serve their
metadata and credentials) never. An IPv6 address that carries an IPv4 address (IPv4-mapped and
-compatible, NAT64, 6to4, Teredo) reaches that IPv4 address, so a loopback, private or link-local one
inside gets that IPv4's verdict.
"""

from __future__ import annotations

import ipaddress
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

WEB_PORTS = frozenset({80, 443})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1"})
# The model APIs of the agents we drive, where their settings name none.
DEFAULT_MODEL_APIS = ("https://api.anthropic.com", "https://api.openai.com")
# Variables that name a model API (Claude Code, Codex, Aider) or a package index (pip, uv, npm, yarn).
MODEL_API_VARIABLES = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE")
REGISTRY_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX",
                      "UV_EXTRA_INDEX_URL", "NPM_CONFIG_REGISTRY", "npm_config_registry", "YARN_REGISTRY")


@dataclass(frozen=True)
class Entry:
    host: str  # lower case, no trailing dot; `*` or `*.domain` for many
    port: int | None  # None: the web ports

    def names(self, host: str, port: int) -> bool:
        if port not in ({self.port} if self.port is not None else WEB_PORTS):
            return False
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host

    @property
    def loopback_port(self) -> int | None:
        """The port to mirror on the sandbox's own loopback, for clients that never proxy loopback."""
        return self.port if self.host in LOOPBACK_NAMES and self.port is not None else None

    def __str__(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"


class InvalidEntry(ValueError):
    pass


def parse_entry(text: str) -> Entry:
    """`host`, `host:port`, `*.domain`, `*`; a URL's scheme and path are ignored (`https://h/v1` -> `h`)."""
    word = text.strip().lower()
    if "://" in word:
        split = urlsplit(word)
        if not split.hostname:
            raise InvalidEntry(f"`{text}` names no host")
        return Entry(split.hostname.rstrip("."), split.port)
    if word.startswith("["):  # [v6 address] or [v6 address]:port
        host, _, port = word[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = word.partition(":") if word.count(":") == 1 else (word, "", "")
    host = host.rstrip(".")
    if not host or any(ch.isspace() or ch in "/@?#" for ch in host) or ("*" in host and host != "*"
                                                                       and not host.startswith("*.")):
        raise InvalidEntry(f"`{text}` is not a host, host:port, *.domain or *")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise InvalidEntry(f"`{text}`: the port must be a number from 1 to 65535")
    return Entry(host, int(port) if port else None)


def url_entry(url: str) -> Entry | None:
    """A model API's or an index's URL as an entry: its host, and its port when the URL names one
    (which is how a model API on the host's loopback, named on purpose, becomes reachable)."""
    try:
        split = urlsplit(url.strip())
        port = split.port
    except ValueError:
        return None
    if split.scheme not in ("http", "https") or not split.hostname:
        return None
    return Entry(split.hostname.rstrip("."), port)


def git_host_entry(remote_url: str | None) -> Entry | None:
    """The codebase's git host, when its remote is reached over http(s) (ssh does not go through a proxy)."""
    return url_entry(remote_url) if remote_url else None


def entries_of_environment(environ: Mapping[str, str], agent_configs: Iterable[Path] = ()) -> list[Entry]:
    """The model APIs and package indexes the agents' and tools' own settings name, and the defaults.
    `agent_configs`: the operator's folders of Codex (its `config.toml`'s providers) and Claude Code
    (`settings.json`'s `env`); a run cannot write them (activities/runs/agents/configs.py), so a port
    they name opens a loopback or private address as the service's own variables do."""
    urls = list(DEFAULT_MODEL_APIS)
    for name in (*MODEL_API_VARIABLES, *REGISTRY_VARIABLES):
        urls += environ.get(name, "").split()
    for folder in agent_configs:
        urls += _codex_providers(folder) + _claude_settings_urls(folder)
    return [entry for entry in map(url_entry, urls) if entry is not None]


def _codex_providers(codex_home: Path) -> list[str]:
    """The `base_url` of each model provider in Codex's config.toml."""
    try:
        config = tomllib.loads((codex_home / "config.toml").read_text())
    except (OSError, ValueError):
        return []
    providers = config.get("model_providers", {})
    return [provider["base_url"] for provider in providers.values()
            if isinstance(provider, dict) and isinstance(provider.get("base_url"), str)]


def _claude_settings_urls(claude_folder: Path) -> list[str]:
    """The model API Claude Code's `settings.json` names in its `env`."""
    try:
        variables = json.loads((claude_folder / "settings.json").read_text()).get("env", {})
    except (OSError, ValueError, AttributeError):
        return []
    return [variables[name] for name in MODEL_API_VARIABLES
            if isinstance(variables, dict) and isinstance(variables.get(name), str)]


def unique(entries: Iterable[Entry]) -> tuple[Entry, ...]:
    return tuple(dict.fromkeys(entries))


@dataclass(frozen=True)
class Verdict:
    address: str | None  # where to connect; None when refused
    reason: str = ""  # why refused


def decide(entries: Iterable[Entry], host: str, port: int, addresses: Iterable[str]) -> Verdict:
    """Whether `host:port`, resolved to `addresses`, may be reached; the first address that may."""
    host = host.lower().rstrip(".")
    named = [entry for entry in entries if entry.names(host, port)]
    if not named:
        return Verdict(None, "not on the allow-list")
    explicit_port = any(entry.port == port and entry.host != "*" for entry in named)
    reasons = []
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # the kernel connects to the IPv4 address itself
        judged, carried = _judged(address)
        if judged.is_link_local or judged.is_multicast or judged.is_unspecified or judged.is_reserved:
            reasons.append(f"{address}{carried} is link-local or reserved")
        elif _is_public(judged) or explicit_port:
            return Verdict(str(address))
        else:
            reasons.append(f"{address}{carried} is a loopback or private address (list it with its port to allow it)")
    return Verdict(None, "; ".join(dict.fromkeys(reasons)) or "the name resolves to no address")


IPv4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated, but still an IPv4 address in the last 32 bits
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # a NAT64 gateway connects to the IPv4 address in the last 32 bits


def _judged(address: ipaddress.IPv4Address | ipaddress.IPv6Address
            ) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, str]:
    """The address whose verdict counts, and how a refusal names it: an IPv6 address that carries a
    loopback, private or link-local IPv4 address reaches that address (through the host's own stack, a
    NAT64 gateway, a 6to4 or Teredo relay), so that IPv4 address decides; any other address decides itself."""
    if isinstance(address, ipaddress.IPv4Address) or address.is_loopback or address.is_unspecified:
        return address, ""  # `::1` and `::` lie in IPv4_COMPATIBLE's block but are IPv6's own
    carried = None
    if address in IPv4_COMPATIBLE or address in NAT64:
        carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    elif address.sixtofour is not None:
        carried = address.sixtofour
    elif address.teredo is not None:
        carried = address.teredo[1]  # (the Teredo server, the client behind it): the client is reached
    if carried is None or _is_public(carried):
        return address, ""
    return carried, f" (it carries {carried})"


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    # fec0::/10 (site-local) is deprecated and private, but Python counts it global.
    return address.is_global and not (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
