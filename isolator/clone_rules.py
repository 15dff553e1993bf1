"""What `/clone` takes from chat (pure): URLs on the allowed hosts, absolute paths under the allowed roots.

The REST API and the test adapter (`isolator dev`, on its own machine) register local paths as before;
a chat platform's message carries its ClonePolicy (isolator/trust.py).
"""

from __future__ import annotations

import posixpath
import re

from isolator.contracts.trust import ClonePolicy
from isolator.repositories import is_clone_url

# Printable ASCII without space, `\` or brackets (git looks for `@[` anywhere, even in the path):
# anything else may be read differently by git, curl and ssh.
_PLAIN = re.compile(r"[\x21-\x5a\x5e-\x7e]+")
# Host, user and password leave out `%` (git decodes an ssh:// URL before it splits it) and `?`, `#`
# (where curl ends the host): each reader then finds the same host.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
_USER = r"[A-Za-z0-9._~][A-Za-z0-9._~-]*"  # never `-` first: ssh would read it as an option
_PORT = r"(?::(?P<port>[0-9]{1,5}))?"
_SCP_HOST = re.compile(rf"(?:{_USER}@)?(?P<host>{_NAME})")
_HTTP = re.compile(rf"(?:{_USER}(?::[A-Za-z0-9._~-]+)?@)?(?P<host>{_NAME}){_PORT}")
_SSH = re.compile(rf"(?:{_USER}@)?(?P<host>{_NAME}){_PORT}")
# The schemes git itself connects with; any other goes to a remote helper.
_AUTHORITY = {"https": _HTTP, "http": _HTTP, "ssh": _SSH, "git+ssh": _SSH, "ssh+git": _SSH,
              "git": re.compile(rf"(?P<host>{_NAME}){_PORT}")}
_UNCLEAR_HOST = ("git would not read one plain host from it: write `https://host/owner/repo`, "
                "`ssh://user@host/owner/repo` or `user@host:owner/repo`, the host in letters, digits, `-` and `.` "
                "(no space, `%`, `\\`, `::`, brackets or leading `-`).")


def clone_refusal(target: str, policy: ClonePolicy, is_path: bool) -> str | None:
    """Why `/clone <target>` is refused here, naming what would be taken; None when it is allowed."""
    if is_path:
        return _path_refusal(target, policy.roots)
    if target.lower().startswith("file:"):
        return _file_url_refusal(policy)
    host = url_host(target)
    if host is None:
        return _UNCLEAR_HOST
    if host not in policy.hosts:
        return (f"`/clone` from chat only takes URLs on the hosts in `CLONE_ALLOWED_HOSTS` (here: "
                f"{_listed(policy.hosts)}), and git would connect to `{host}` with this one{_how_git_reads(target)}: "
                f"`{host}` is not one of them.")
    return None


def spelling_refusal(url: str) -> str | None:
    """Why the service clones nothing from `url` as written, whoever asks (the hosts aside); None when it
    clones it. Said instead of the usage, so that whoever wrote it learns what git would do with it."""
    if is_clone_url(url):
        return None
    host = url_host(url)
    if host is None:
        return _UNCLEAR_HOST
    return (f"git would connect to `{host}` over ssh with this URL{_how_git_reads(url)}, a spelling the service does "
            f"not clone: write `https://{host}/owner/repo` or `user@{host}:owner/repo`.")


def _how_git_reads(url: str) -> str:
    """How git finds the host, where a reader may see another: an `@` after the first `:` of an scp-like URL."""
    if "://" not in url and "@" in url.partition(":")[2]:
        return " (without `://`, git reads the host up to the first `:`, and all after it is the path)"
    return ""


def _file_url_refusal(policy: ClonePolicy) -> str:
    """A `file://` URL is a local path: say which form of it, if any, this chat takes."""
    if policy.roots:
        return (f"a `file://` URL is a local path: give the folder's absolute path instead, under "
                f"`CLONE_ALLOWED_ROOTS` ({_listed(policy.roots)}).")
    if policy.hosts:
        return ("a `file://` URL is a local path, and `/clone` from chat takes none here (`CLONE_ALLOWED_ROOTS` is "
                f"not set): give a repository URL on a host in `CLONE_ALLOWED_HOSTS` ({_listed(policy.hosts)}), "
                "or register the checkout with the REST API.")
    return ("a `file://` URL is a local path, and `/clone` from chat takes none here, nor any URL (neither "
            "`CLONE_ALLOWED_ROOTS` nor `CLONE_ALLOWED_HOSTS` is set): register the checkout with the REST API.")


def _listed(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names) or "none"


def url_host(url: str) -> str | None:
    """The host git connects to for a clone URL, lower-cased: `https://user@Host:443/o/r` and `git@host:o/r`
    -> `host`; None when git would not connect to one plain host (a path, a remote helper, an odd spelling).

    As git reads it (connect.c, transport.c): `<scheme>://` for the schemes it connects with itself, else
    `[user@]host:path` when a `:` comes before any `/`, the host ending at the first `:`.
    """
    if not _PLAIN.fullmatch(url) or "::" in url:  # `ext::cmd`, `fd::`, `https::…`: remote helpers
        return None
    scheme, separator, rest = url.partition("://")
    if separator:
        pattern = _AUTHORITY.get(scheme)
        found = pattern.fullmatch(rest.partition("/")[0]) if pattern else None
        if found is None or int(found["port"] or 0) > 65535:  # git hands a bad port to ssh as part of the host
            return None
        return found["host"].lower()
    head, colon, path = url.partition(":")
    if not colon or "/" in head:  # no `:` before any `/`: a local path to git
        return None
    if path.startswith("-"):  # the server's git would read it as an option
        return None
    found = _SCP_HOST.fullmatch(head)
    return found["host"].lower() if found else None


def _path_refusal(path: str, roots: list[str]) -> str | None:
    if not path.startswith("/"):
        return "a relative path is refused (it would be read from the service's own folder): give an absolute path."
    if not roots:
        return ("`/clone` from chat takes no local path here (`CLONE_ALLOWED_ROOTS` is not set): "
                "give a repository URL, or register the checkout with the REST API.")
    where = _listed(roots)
    if ".." in path.split("/"):
        return f"a path with `..` is refused: give the absolute path of a checkout under {where}."
    normal = posixpath.normpath(path)
    if not any(normal == root or normal.startswith(root.rstrip("/") + "/") for root in roots):
        return f"`/clone` from chat only takes local paths under `CLONE_ALLOWED_ROOTS` ({where})."
    return None
