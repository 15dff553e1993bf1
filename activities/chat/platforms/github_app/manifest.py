"""What the service needs of its GitHub App (permissions and events: the manifest the dashboard posts, the
list docs/platforms.md gives for setting it up by hand, and what the doctor checks), and the manifest
flow's exchange of GitHub's code for the App (`POST /app-manifests/{code}/conversions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp

# What the service does: read and push code, comment on issues and PRs, open PRs (write); read check
# runs, workflow runs and their logs, and commit statuses for the PR loop and `/status` (read).
PERMISSIONS = {"contents": "write", "issues": "write", "pull_requests": "write", "checks": "read",
               "actions": "read", "statuses": "read", "metadata": "read"}
# The events api/platforms/github/ handles (`installation` and `installation_repositories` come to every
# App unasked).
EVENTS = ["issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment",
          "check_suite", "workflow_run", "push"]
_LEVELS = {"read": 1, "write": 2, "admin": 3}
_TIMEOUT_SECONDS = 10


def site_of(api_url: str) -> str:
    """GitHub's web site for its API: github.com for api.github.com, the server for Enterprise's `/api/v3`."""
    url = api_url.rstrip("/")
    if url == "https://api.github.com":
        return "https://github.com"
    return url.removesuffix("/api/v3")


def manifest(public_url: str, name: str) -> dict[str, Any]:
    """The App manifest: its webhook at PUBLIC_URL, and the dashboard's callback as its redirect URL."""
    base = public_url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "hook_attributes": {"url": f"{base}/webhooks/github", "active": True},
        "redirect_url": f"{base}/connect/github/callback",
        "public": False,
        "default_permissions": PERMISSIONS,
        "default_events": EVENTS,
    }


def missing_permissions(granted: dict[str, str]) -> list[str]:
    """`name: level` of each permission the App lacks or has too low."""
    return [f"{name}: {level}" for name, level in PERMISSIONS.items()
            if _LEVELS.get(granted.get(name, ""), 0) < _LEVELS[level]]


def missing_events(subscribed: list[str]) -> list[str]:
    return [event for event in EVENTS if event not in subscribed]


@dataclass(frozen=True)
class ConvertedApp:
    app_id: int
    slug: str
    html_url: str
    pem: str
    webhook_secret: str
    client_id: str
    client_secret: str


class ConversionFailed(Exception):
    """GitHub did not give the App for the code: the message says why, for the page."""


async def convert(api_url: str, code: str) -> ConvertedApp:
    """GitHub's code (one hour, once) for the new App's id, slug, key and secrets; no authentication."""
    url = f"{api_url.rstrip('/')}/app-manifests/{code}/conversions"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=_TIMEOUT_SECONDS)) as session:
            async with session.post(url, headers={"Accept": "application/vnd.github+json"}) as response:
                status = response.status
                data = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        raise ConversionFailed(f"GitHub could not be asked ({type(error).__name__})") from None
    data = data if isinstance(data, dict) else {}
    if status != 201:
        raise ConversionFailed(f"GitHub answered {status} ({data.get('message') or 'no message'}): the code may be "
                               "used already or older than an hour; start again")
    try:
        return ConvertedApp(int(data["id"]), str(data["slug"]), str(data.get("html_url") or ""), str(data["pem"]),
                            str(data.get("webhook_secret") or ""), str(data.get("client_id") or ""),
                            str(data.get("client_secret") or ""))
    except (KeyError, TypeError, ValueError):
        raise ConversionFailed("GitHub's answer lacks the App's id, slug or key") from None
