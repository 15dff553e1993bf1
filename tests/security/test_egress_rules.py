"""The egress allow-list, the pure part (isolator/egress_rules.py): what an entry names, and which
addresses a name may resolve to."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.egress_rules import Entry, InvalidEntry, decide, entries_of_environment, parse_entry

LISTED = [parse_entry(word) for word in ("api.example.com", "127.0.0.1:8123", "*.git.example", "10.0.0.5:443")]


@pytest.mark.parametrize(("text", "entry"), [
    ("API.Example.com.", Entry("api.example.com", None)),
    ("host.example:8443", Entry("host.example", 8443)),
    ("*.example.com", Entry("*.example.com", None)),
    ("*", Entry("*", None)),
    ("https://models.example/v1", Entry("models.example", None)),
    ("http://127.0.0.1:4000", Entry("127.0.0.1", 4000)),
    ("[::1]:8080", Entry("::1", 8080)),
])
def test_an_entry_is_read_as_written(text: str, entry: Entry) -> None:
    assert parse_entry(text) == entry


@pytest.mark.parametrize("text", ["a.example:0", "a.example:99999", "a.example:x", "a/b", "user@a.example",
                                  "a*.example", "https://"])
def test_a_malformed_entry_is_refused(text: str) -> None:
    with pytest.raises(InvalidEntry):
        parse_entry(text)


@pytest.mark.parametrize(("host", "port", "addresses", "reached"), [
    ("api.example.com", 443, ["203.0.113.10", "93.184.216.34"], "93.184.216.34"),  # the first public one
    ("api.example.com", 22, ["93.184.216.34"], None),  # not a web port, none named
    ("repo.git.example", 443, ["93.184.216.34"], "93.184.216.34"),
    ("git.example", 443, ["93.184.216.34"], None),  # `*.domain` names its subdomains only
    ("127.0.0.1", 8123, ["127.0.0.1"], "127.0.0.1"),  # a loopback port listed on purpose
    ("127.0.0.1", 8000, ["127.0.0.1"], None),  # any other port of the host's loopback
    ("api.example.com", 443, ["127.0.0.1"], None),  # a public name rebound to loopback
    ("api.example.com", 443, ["::ffff:127.0.0.1"], None),
    ("api.example.com", 443, ["192.168.1.1", "10.1.2.3"], None),  # private, no port named
    ("10.0.0.5", 443, ["10.0.0.5"], "10.0.0.5"),  # private, listed with its port
    ("api.example.com", 443, ["169.254.169.254"], None),  # cloud metadata, never
    ("unlisted.example", 443, ["93.184.216.34"], None),
])
def test_a_name_is_reached_only_at_an_address_its_entry_allows(host: str, port: int, addresses: list[str],
                                                               reached: str | None) -> None:
    assert decide(LISTED, host, port, addresses).address == reached


def test_metadata_stays_closed_even_to_the_whole_internet() -> None:
    everything = [parse_entry("*")]
    assert decide(everything, "any.example", 80, ["169.254.169.254"]).address is None
    assert decide(everything, "any.example", 80, ["127.0.0.1"]).address is None
    assert decide(everything, "any.example", 443, ["93.184.216.34"]).address == "93.184.216.34"


@pytest.mark.parametrize(("address", "carried"), [
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.1.2.3", "private"),  # IPv4-mapped
    ("::127.0.0.1", "loopback"), ("::192.168.1.1", "private"),  # IPv4-compatible
    ("64:ff9b::7f00:1", "loopback"), ("64:ff9b::10.0.0.5", "private"),  # NAT64
    ("2002:7f00:1::1", "loopback"), ("2002:a00:5::1", "private"), ("2002:c0a8:101::", "private"),  # 6to4
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo: its client, 127.0.0.1, bits inverted
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo's client 10.0.0.1
    ("fec0::1", "private"), ("fec0:1:2::3", "private"),  # site-local: deprecated, private
])
def test_an_ipv6_address_is_judged_by_the_ipv4_address_it_carries(address: str, carried: str) -> None:
    everything = [parse_entry("*")]
    refused = decide(everything, "api.example.com", 443, [address])
    assert refused.address is None and "loopback or private" in refused.reason, refused
    assert decide([parse_entry("api.example.com:443")], "api.example.com", 443, [address]).address is not None, \
        "a private address listed with its port, on purpose, as its IPv4 form would be"


@pytest.mark.parametrize("address", ["::169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1",
                                     "2001:0:4136:e378:8000:63bf:5601:5601"])
def test_metadata_stays_closed_inside_an_ipv6_address(address: str) -> None:
    listed = [parse_entry("*"), parse_entry("api.example.com:443")]
    refused = decide(listed, "api.example.com", 443, [address])
    assert refused.address is None and "carries 169.254.169.254" in refused.reason, refused


def test_an_ipv6_address_that_carries_a_public_ipv4_address_is_judged_as_before() -> None:
    everything = [parse_entry("*")]
    assert decide(everything, "any.example", 443, ["2002:5db8:d822::1"]).address == "2002:5db8:d822::1"
    assert decide(everything, "any.example", 443, ["::ffff:93.184.216.34"]).address == "93.184.216.34"
    assert decide(everything, "any.example", 443, ["2606:2800:220:1::1"]).address == "2606:2800:220:1::1"
    assert decide(everything, "any.example", 443, ["::1"]).address is None


def test_the_agents_own_settings_name_their_model_apis_and_indexes(tmp_path: Path) -> None:
    codex, claude = tmp_path / "codex", tmp_path / "claude"
    codex.mkdir()
    claude.mkdir()
    (codex / "config.toml").write_text('[model_providers.fake]\nbase_url = "http://127.0.0.1:9999/v1"\n')
    (claude / "settings.json").write_text('{"env": {"ANTHROPIC_BASE_URL": "http://10.1.2.3:4000"}}')
    environ = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:7000", "PIP_EXTRA_INDEX_URL": "https://a.example/simple "
               "https://b.example/simple"}

    entries = entries_of_environment(environ, [codex, claude])

    assert {Entry("127.0.0.1", 7000), Entry("127.0.0.1", 9999), Entry("10.1.2.3", 4000), Entry("a.example", None),
            Entry("b.example", None), Entry("api.anthropic.com", None)} <= set(entries)
    assert Entry("127.0.0.1", 7000).loopback_port == 7000
    # The operator's config.toml and settings.json are read-only to every run: the ports they name open.
    assert decide(entries, "127.0.0.1", 9999, ["127.0.0.1"]).address == "127.0.0.1"
    assert decide(entries, "10.1.2.3", 4000, ["10.1.2.3"]).address == "10.1.2.3"
    assert decide(entries, "127.0.0.1", 9998, ["127.0.0.1"]).address is None
