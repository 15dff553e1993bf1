"""Pure helpers for repository URLs and names, shared by the API and the activities."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from urllib.parse import urlsplit

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$")
_URL = re.compile(r"^(https?|ssh|git|file)://[^\s]+$")


def looks_like_path(value: str) -> bool:
    return value.startswith(("/", "~", "./", "../"))


def is_clone_url(value: str) -> bool:
    """A URL git may clone from: http(s), ssh, git, file, or `user@host:path`."""
    if not value or value.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in value):
        return False
    return bool(_URL.match(value) or _SCP_LIKE.match(value))


def normalize_repository_url(url: str) -> str:
    """No trailing slash, no `.git`: `https://github.com/o/r.git/` -> `https://github.com/o/r`."""
    url = url.strip().rstrip("/")
    if url.endswith(".git"):
        url = url[: -len(".git")]
    return url.rstrip("/")


def name_from_source(url: str | None, path: str | None) -> str:
    """The default codebase name: the last part of the URL or of the path."""
    source = normalize_repository_url(url) if url else (path or "").rstrip("/")
    tail = re.split(r"[/:]", source)[-1] if source else ""
    return PurePosixPath(tail).name


def repository_key(url: str) -> str:
    """The same repository however it is spelled: `git@github.com:O/r.git` ~ `https://github.com/O/r`.

    Host lowercased, user, port and `.git` dropped; `file://` URLs and paths stay as paths.
    """
    url = normalize_repository_url(url)
    scp = _SCP_LIKE.match(url)
    if scp and "://" not in url:
        user_host, _, path = url.partition(":")
        return f"{user_host.rpartition('@')[2].lower()}/{path.strip('/')}"
    parsed = urlsplit(url)
    if parsed.scheme in ("", "file"):
        return parsed.path.rstrip("/")
    return f"{(parsed.hostname or '').lower()}/{parsed.path.strip('/')}"
