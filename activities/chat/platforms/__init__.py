"""The platforms' side of the seam: one module per platform in this package.

Each module offers `make_deliverer(settings[, pool]) -> Deliver` (posts a reply through the platform's SDK)
and may offer `complete_hints(settings, conversation_id, hints) -> IsolationHints` (asks the
platform's API for what the webhook did not carry). Nothing in `workflows/` names a platform.
"""

from __future__ import annotations

from types import ModuleType

import asyncpg
from temporalio import activity

from activities.chat.platforms import discord, github, slack, telegram
from activities.chat.replies import Deliver
from isolator.contracts.message import CompleteHintsInput, IsolationHints
from isolator.settings import Settings

PLATFORMS: dict[str, ModuleType] = {"github": github, "slack": slack, "telegram": telegram, "discord": discord}


def deliverers(settings: Settings, pool: asyncpg.Pool) -> dict[str, Deliver]:
    return {
        "github": github.make_deliverer(settings),
        "slack": slack.make_deliverer(settings),
        "telegram": telegram.make_deliverer(settings),
        # Discord answers a slash command through its interaction, whose token the API keeps in the database.
        "discord": discord.make_deliverer(settings, pool),
    }


class PlatformActivities:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn
    async def complete_hints(self, request: CompleteHintsInput) -> IsolationHints:
        """Fill in what the platform's API knows (a PR's head, the issues it closes)."""
        module = PLATFORMS.get(request.platform)
        complete = getattr(module, "complete_hints", None)
        if complete is None:
            return request.hints
        return await complete(self.settings, request.conversation_id, request.hints)
