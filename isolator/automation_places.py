"""Where an automation reports, as the conversation its platform's replies go to.

Pure: `slack:#eng-bots` becomes Slack's `#eng-bots:` (the channel itself, no thread), `telegram:<chat>`
the chat (`<chat>:0`), `discord:<channel>` the channel, `github:issue:<n>` the codebase's issue, and
`github:origin` the issue or PR the event came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from isolator.contracts.automation import ReportPlace


@dataclass(frozen=True)
class PlaceConversation:
    platform: str
    conversation_id: str


class NoPlace(ValueError):
    """The place cannot be reached from this firing: says why, for the operator."""


def place_conversation(place: ReportPlace, repository: str | None, origin: str | None) -> PlaceConversation:
    """`repository`: the codebase's `owner/name` on GitHub; `origin`: the event's GitHub conversation."""
    if place.platform == "slack":
        return PlaceConversation("slack", f"{place.place}:")
    if place.platform == "telegram":
        return PlaceConversation("telegram", place.place if ":" in place.place else f"{place.place}:0")
    if place.platform == "github":
        if place.place == "origin":
            if origin is None:
                raise NoPlace("`github:origin` reports to the issue or PR of a GitHub event, and this firing has none")
            return PlaceConversation("github", origin)
        if repository is None:
            raise NoPlace("`github:issue:<n>` needs a codebase whose origin is on GitHub")
        return PlaceConversation("github", f"{repository}#{place.place.removeprefix('issue:')}")
    return PlaceConversation(place.platform, place.place)


def allowed_place(place: ReportPlace, allowed: list[str] | None, used: set[str]) -> bool:
    """A repository's automation reports only where the operator allows (AUTOMATION_REPORT_PLACES), or,
    without that setting, on a platform its codebase's conversations already use."""
    if allowed is not None:
        return place.spelled().lower() in {entry.lower() for entry in allowed} or \
            f"{place.platform}:*" in allowed
    return place.platform in used or place.spelled() == "github:origin"
