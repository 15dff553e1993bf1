"""What `/clone` takes from chat (pure): URLs on the allowed hosts, absolute paths under the allowed roots.

The REST API and the test adapter (`isolator dev`, on its own machine) register local paths as before;
a chat platform's message carries its ClonePolicy (isolator/trust.py).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urlsplit

from isolator.contracts.trust import ClonePolicy

_SCP_LIKE = re.compile(r"^[^@/]+@(?P<host>[^:/]+):")


def clone_refusal(target: str, policy: ClonePolicy, is_path: bool) -> str | None:
    """Why `/clone <target>` is refused here, naming what would be taken; None when it is allowed."""
    if is_path:
        return _path_refusal(target, policy.roots)
    if target.lower().startswith("file:"):
        return "a `file://` URL is a local path: give the folder's absolute path instead."
    host = url_host(target)
    if host is None or host not in policy.hosts:
        allowed = ", ".join(f"`{name}`" for name in policy.hosts) or "none"
        return (f"`/clone` from chat only takes URLs on the hosts in `CLONE_ALLOWED_HOSTS` (here: {allowed}), "
                f"and `{host or target}` is not one of them.")
    return None


def url_host(url: str) -> str | None:
    """The host a clone URL reaches: `https://user@Host:443/o/r` and `git@host:o/r` -> `host`."""
    scp = _SCP_LIKE.match(url)
    if scp and "://" not in url:
        return scp.group("host").lower()
    try:
        return urlsplit(url).hostname or None  # lower-cased, without user and port
    except ValueError:
        return None


def _path_refusal(path: str, roots: list[str]) -> str | None:
    if not path.startswith("/"):
        return "a relative path is refused (it would be read from the service's own folder): give an absolute path."
    if not roots:
        return ("`/clone` from chat takes no local path here (`CLONE_ALLOWED_ROOTS` is not set): "
                "give a repository URL, or register the checkout with the REST API.")
    where = ", ".join(f"`{root}`" for root in roots)
    if ".." in path.split("/"):
        return f"a path with `..` is refused: give the absolute path of a checkout under {where}."
    normal = posixpath.normpath(path)
    if not any(normal == root or normal.startswith(root.rstrip("/") + "/") for root in roots):
        return f"`/clone` from chat only takes local paths under `CLONE_ALLOWED_ROOTS` ({where})."
    return None
