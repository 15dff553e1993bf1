"""Automations' settings (docs/automations.md). Settings inherits them."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class AutomationSettings(BaseSettings):
    automations: Literal["on", "off"] = Field("on", validation_alias=_env("AUTOMATIONS"))
    # Where a repository's automation may report (`slack:#eng-bots, telegram:123`). Unset: the places
    # its codebase's conversations already use.
    automation_report_places: str | None = Field(None, validation_alias=_env("AUTOMATION_REPORT_PLACES"))
