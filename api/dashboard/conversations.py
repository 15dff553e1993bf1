"""A conversation as the dashboard shows it: its platform and id, and a link where the platform has a
URL for it (a GitHub issue or PR: `owner/repo#42` under the codebase's repository URL)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_GITHUB = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>[0-9]+)$")


@dataclass
class ConversationLink:
    platform: str
    conversation_id: str
    url: str | None


def conversation_links(conversations: list[str], repository_url: str | None) -> list[ConversationLink]:
    return [_link(*conversation.split(":", 1), repository_url) for conversation in conversations]


def _link(platform: str, conversation_id: str, repository_url: str | None) -> ConversationLink:
    url = None
    match = _GITHUB.match(conversation_id)
    if platform == "github" and match and repository_url and repository_url.startswith(("https://", "http://")):
        if repository_url.rstrip("/").lower().endswith("/" + match["repo"].lower()):
            url = f"{repository_url.rstrip('/')}/issues/{match['number']}"  # GitHub sends a PR's number on to the PR
    return ConversationLink(platform, conversation_id, url)
