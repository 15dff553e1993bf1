"""`/clone` judges a URL by the host git would connect to: the red-team strings, the tricky spellings, and
one check against git itself (its ssh arguments recorded by a stand-in for ssh, nothing dialed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from isolator.clone_rules import clone_refusal, spelling_refusal, url_host
from isolator.contracts.trust import ClonePolicy

GITHUB_ONLY = ClonePolicy(hosts=["github.com"], roots=[])
RED_TEAM = [  # each reaches another host through git while a looser reading sees github.com
    "evil.example:x@github.com:o/r",
    "github.com:x@[evil.example]:r",
    "ssh://github.com/x@[evil.example]/r",
    "ssh://evil.example%2Fx@github.com/o/r",
]


@pytest.mark.parametrize("url", [
    "https://github.com/o/r", "https://GitHub.com:443/o/r.git", "http://github.com/o/r",
    "https://x-access-token:ghp_abc123@github.com/o/r", "ssh://git@github.com/o/r", "ssh://git@github.com:22/o/r",
    "git+ssh://git@GitHub.com/o/r", "ssh+git://github.com/o/r", "git://github.com/o/r",
    "git@github.com:o/r.git", "github.com:o/r", "GIT@GITHUB.COM:o/r", "https://github.com/o/r?x#y",
])
def test_plain_urls_name_their_host(url: str) -> None:
    assert url_host(url) == "github.com"
    assert clone_refusal(url, GITHUB_ONLY, is_path=False) is None


@pytest.mark.parametrize(("url", "host"), [
    ("evil.example:x@github.com:o/r", "evil.example"),  # scp-like: the host ends at the first `:`
    ("http://github.com@evil.example/o/r", "evil.example"),
    ("https://github.com.evil.example/o/r", "github.com.evil.example"),
    ("ssh://git@gitlab.example/o/r", "gitlab.example"),
])
def test_other_hosts_are_refused_by_the_host_git_reaches(url: str, host: str) -> None:
    assert url_host(url) == host
    refusal = clone_refusal(url, GITHUB_ONLY, is_path=False)
    assert refusal is not None and f"`{host}` is not one" in refusal and "`CLONE_ALLOWED_HOSTS`" in refusal


@pytest.mark.parametrize("url", RED_TEAM[1:] + [
    # remote helpers and transports that run commands
    "ext::sh -c touch% /tmp/pwned", "ext::sh", "fd::3", "https::github.com/o/r", "github.com::o/r",
    "foo://github.com/o/r", "SSH://github.com/o/r", "HTTPS://github.com/o/r",
    # options for ssh or the server's git
    "-oProxyCommand=x:r", "--upload-pack=touch /tmp/pwned", "ssh://-oProxyCommand=x/r",
    "ssh://-oProxyCommand=x@github.com/r", "-git@github.com:o/r", "git@github.com:-path",
    # more than one `@`, or a user where git takes none
    "ssh://a@b@github.com/o/r", "https://a@b@github.com/o/r", "a@b@github.com:o/r", "git://git@github.com/o/r",
    "ssh://user:secret@github.com/o/r",
    # an authority that parsers end at different places
    "https://evil.example#@github.com/", "https://evil.example\\@github.com/", "https://evil.example?@github.com/",
    "git@github.com:o/r://x",
    # brackets, percent-encoding, trailing dots, odd ports
    "https://[::1]/o/r", "[evil.example]:o/r", "git@[github.com]:o/r", "https://github%2ecom/o/r",
    "github.com.:o/r", "https://github.com./o/r", "ssh://github.com:99999/o/r", "ssh://github.com:x/o/r",
    "https://github.com:/o/r",
    # whitespace, control characters, non-ASCII
    " https://github.com/o/r", "https://github.com/o/r\n", "git@github.com:o/r\x00", "https://github.com/o r",
    "https://github.com\t/o/r", "https://gïthub.com/o/r",
    # local paths to git
    "file:///srv/r", "a/b:c", "./a:b", "github.com", "",
])
def test_unclear_urls_have_no_host(url: str) -> None:
    assert url_host(url) is None


def test_the_red_team_scp_url_is_refused_saying_which_host_git_reaches() -> None:
    refusal = clone_refusal("evil.example:x@github.com:o/r", GITHUB_ONLY, is_path=False)
    assert refusal is not None and "git would connect to `evil.example`" in refusal, refusal
    assert "git reads the host up to the first `:`" in refusal


@pytest.mark.parametrize(("url", "reason"), [
    ("evil.example:x@github.com:o/r", "git would connect to `evil.example` over ssh"),
    ("github.com:o/r", "write `https://github.com/owner/repo` or `user@github.com:owner/repo`"),
    ("git+ssh://git@github.com/o/r", "git would connect to `github.com` over ssh"),
    ("ext::sh", "git would not read one plain host from it"),
])
def test_a_spelling_the_service_does_not_clone_is_refused_with_why(url: str, reason: str) -> None:
    refusal = spelling_refusal(url)
    assert refusal is not None and reason in refusal, refusal


@pytest.mark.parametrize("url", ["https://github.com/o/r", "git@github.com:o/r.git", "ssh://git@github.com/o/r"])
def test_a_plain_url_has_no_spelling_to_refuse(url: str) -> None:
    assert spelling_refusal(url) is None


def test_the_refusal_of_an_unclear_url_says_how_to_write_one() -> None:
    refusal = clone_refusal("github.com:x@[evil.example]:r", GITHUB_ONLY, is_path=False)
    assert refusal is not None and "`https://host/owner/repo`" in refusal and "`user@host:owner/repo`" in refusal


def test_a_file_url_is_answered_with_what_this_chat_takes_instead() -> None:
    with_roots = clone_refusal("file:///srv/repos/r", ClonePolicy(hosts=[], roots=["/srv/repos"]), is_path=False)
    hosts_only = clone_refusal("file:///srv/repos/r", GITHUB_ONLY, is_path=False)
    nothing = clone_refusal("FILE:///srv/repos/r", ClonePolicy(), is_path=False)
    assert with_roots is not None and "absolute path instead, under `CLONE_ALLOWED_ROOTS` (`/srv/repos`)" in with_roots
    assert hosts_only is not None and "absolute path" not in hosts_only
    assert "a repository URL on a host in `CLONE_ALLOWED_HOSTS` (`github.com`)" in hosts_only
    assert nothing is not None and "absolute path" not in nothing and "register the checkout with the REST API" in nothing


def test_the_red_team_strings_are_refused_when_only_github_is_allowed() -> None:
    for url in RED_TEAM:
        assert clone_refusal(url, GITHUB_ONLY, is_path=False) is not None, url


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_our_host_is_the_one_git_hands_to_ssh(tmp_path: Path) -> None:
    hosts = {url: _git_ssh_host(url, tmp_path) for url in [
        *RED_TEAM, "git@GitHub.com:o/r", "github.com:o/r", "deploy@git.example.org:team/r.git",
        "ssh://git@github.com:22/o/r", "git+ssh://git@github.com/o/r", "ssh+git://github.com/o/r",
        "ssh://a@b@github.com/o/r", "a@b@github.com:o/r", "[evil.example]:o/r",
    ]}
    assert all(hosts[url] == "evil.example" for url in RED_TEAM), hosts
    for url, host in hosts.items():
        assert url_host(url) in (None, host), (url, host)
    assert url_host("deploy@git.example.org:team/r.git") == hosts["deploy@git.example.org:team/r.git"]


def _git_ssh_host(url: str, tmp_path: Path) -> str | None:
    """The host ssh would connect to when git reaches `url`: a stand-in for ssh records its arguments and
    fails, so nothing is dialed; the host is the argument before git's command, after ssh's last `@`."""
    recorder, record = tmp_path / "ssh", tmp_path / "ssh-args"
    recorder.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$SSH_ARGS"\nexit 1\n')
    recorder.chmod(0o755)
    record.unlink(missing_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "SSH_ARGS": str(record),
           "GIT_SSH_COMMAND": str(recorder), "GIT_SSH_VARIANT": "ssh", "GIT_TERMINAL_PROMPT": "0",
           "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh"}
    subprocess.run(["git", "ls-remote", "--", url], cwd=tmp_path, env=env, capture_output=True, timeout=30)
    if not record.exists():
        return None
    return record.read_text().splitlines()[-2].rpartition("@")[2].lower()
