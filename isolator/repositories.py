"""Pure helpers for repository URLs and names, shared by the API, the workflows and the activities."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

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


def is_hosted_url(url: str) -> bool:
    """A repository on a server (http(s), ssh, git, `user@host:path`), not a folder of this machine
    (a path or a `file://` URL)."""
    return is_clone_url(url) and not url.startswith("file://")


def local_folder_of(url: str) -> str | None:
    """The folder a `file://` URL names on its host (`file:///src/app/` -> `/src/app`); None for another URL."""
    if not url.startswith("file://"):
        return None
    return unquote(urlsplit(url).path).rstrip("/") or "/"


def repository_url_of(url: str, checkout: Path | None = None) -> str:
    """The URL recorded for a codebase: a hosted one normalised; a local one as a place that exists,
    absolute (a relative remote is read from the checkout) and with its `.git` kept."""
    if is_hosted_url(url):
        return normalize_repository_url(url)
    url = url.strip()
    if url.startswith("file://") or checkout is None:
        return url.rstrip("/") or url
    return str((checkout / url).resolve())


def name_from_source(url: str | None, path: str | None) -> str:
    """The default codebase name: the last part of a hosted repository's URL, else of the checkout's
    folder (a local remote such as `../origin.git` says nothing about the project), else of the URL."""
    if url and (is_hosted_url(url) or not path):
        source = normalize_repository_url(url)
    else:
        source = (path or "").rstrip("/")
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
