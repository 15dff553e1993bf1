"""The settings of the allow rules: who may talk to the bot, who may run the commands that destroy or
restore work, and what `/clone` takes from chat (docs/trust.md). Settings inherits them.

Lists are comma-separated (`GITHUB_ALLOWED_ASSOCIATIONS=OWNER,MEMBER`); unset or empty is no rule,
and isolator/trust.py says what each platform does then.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Annotated

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

Names = Annotated[frozenset[str], NoDecode]  # read as a comma-separated string, not as JSON

# GitHub's `author_association` values (https://docs.github.com/en/graphql/reference/enums#commentauthorassociation).
ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR",
                          "FIRST_TIMER", "MANNEQUIN", "NONE"})
_SNOWFLAKE = re.compile(r"[0-9]{1,20}")
_SLACK_ID = re.compile(r"[A-Z0-9]{2,30}")
_TELEGRAM_ID = re.compile(r"[0-9]{1,20}")
_GITHUB_LOGIN = re.compile(r"[a-z0-9][a-z0-9-]{0,38}(\[bot\])?")
_HOST = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


def _names(value: object, pattern: re.Pattern[str], what: str, fold: str = "") -> frozenset[str]:
    """`a, b,c` -> {a, b, c}, each checked against `pattern` (after folding case: "upper" or "lower")."""
    if isinstance(value, (set, frozenset, list, tuple)):
        items = [str(item) for item in value]
    elif isinstance(value, str):
        items = value.split(",")
    else:
        raise ValueError("must be a comma-separated list")
    names = set()
    for item in (item.strip() for item in items):
        item = item.upper() if fold == "upper" else item.lower() if fold == "lower" else item
        if not item:
            continue
        if not pattern.fullmatch(item):
            raise ValueError(f"`{item[:40]}` is not {what}")
        names.add(item)
    return frozenset(names)


class TrustSettings(BaseSettings):
    github_allowed_associations: Names = Field(frozenset({"OWNER", "MEMBER", "COLLABORATOR"}),
                                               validation_alias=_env("GITHUB_ALLOWED_ASSOCIATIONS"))
    github_allowed_bots: Names = Field(frozenset(), validation_alias=_env("GITHUB_ALLOWED_BOTS"))
    github_admin_users: Names = Field(frozenset(), validation_alias=_env("GITHUB_ADMIN_USERS"))
    slack_allowed_teams: Names = Field(frozenset(), validation_alias=_env("SLACK_ALLOWED_TEAMS"))
    slack_allowed_users: Names = Field(frozenset(), validation_alias=_env("SLACK_ALLOWED_USERS"))
    slack_admin_users: Names = Field(frozenset(), validation_alias=_env("SLACK_ADMIN_USERS"))
    telegram_allowed_users: Names = Field(frozenset(), validation_alias=_env("TELEGRAM_ALLOWED_USERS"))
    telegram_admin_users: Names = Field(frozenset(), validation_alias=_env("TELEGRAM_ADMIN_USERS"))
    discord_allowed_guilds: Names = Field(frozenset(), validation_alias=_env("DISCORD_ALLOWED_GUILDS"))
    discord_allowed_roles: Names = Field(frozenset(), validation_alias=_env("DISCORD_ALLOWED_ROLES"))
    discord_allowed_users: Names = Field(frozenset(), validation_alias=_env("DISCORD_ALLOWED_USERS"))
    discord_admin_users: Names = Field(frozenset(), validation_alias=_env("DISCORD_ADMIN_USERS"))
    # Unset: the GitHub host (of GITHUB_API_URL); `none`: no URL at all.
    clone_allowed_hosts: Names | None = Field(None, validation_alias=_env("CLONE_ALLOWED_HOSTS"))
    # Absolute folders a local path given to `/clone` in chat must lie under; unset: no local path.
    clone_allowed_roots: Names = Field(frozenset(), validation_alias=_env("CLONE_ALLOWED_ROOTS"))

    @field_validator("github_allowed_associations", mode="before")
    @classmethod
    def _associations(cls, value: object) -> frozenset[str]:
        names = _names(value, re.compile(r"[A-Z_]+"), "an author association", fold="upper")
        if unknown := names - ASSOCIATIONS:
            raise ValueError(f"unknown association {sorted(unknown)[0]}; use {', '.join(sorted(ASSOCIATIONS))}")
        return names

    @field_validator("github_allowed_bots", "github_admin_users", mode="before")
    @classmethod
    def _logins(cls, value: object) -> frozenset[str]:
        return _names(value, _GITHUB_LOGIN, "a GitHub login", fold="lower")

    @field_validator("slack_allowed_teams", "slack_allowed_users", "slack_admin_users", mode="before")
    @classmethod
    def _slack_ids(cls, value: object) -> frozenset[str]:
        return _names(value, _SLACK_ID, "a Slack id (like T0123ABCD or U0123ABCD)", fold="upper")

    @field_validator("telegram_allowed_users", "telegram_admin_users", mode="before")
    @classmethod
    def _telegram_ids(cls, value: object) -> frozenset[str]:
        return _names(value, _TELEGRAM_ID, "a Telegram user id (digits)")

    @field_validator("discord_allowed_guilds", "discord_allowed_roles", "discord_allowed_users",
                     "discord_admin_users", mode="before")
    @classmethod
    def _snowflakes(cls, value: object) -> frozenset[str]:
        return _names(value, _SNOWFLAKE, "a Discord id (digits)")

    @field_validator("clone_allowed_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: object) -> frozenset[str] | None:
        if value is None:
            return None
        if isinstance(value, str) and value.strip().lower() == "none":
            return frozenset()
        return _names(value, _HOST, "a host name (like github.com)", fold="lower")

    @field_validator("clone_allowed_roots", mode="before")
    @classmethod
    def _roots(cls, value: object) -> frozenset[str]:
        roots = _names(value, re.compile(r"[^\x00-\x1f]+"), "a folder")
        for root in roots:
            path = PurePosixPath(root)
            if not path.is_absolute() or ".." in path.parts:
                raise ValueError(f"`{root}` must be an absolute folder without `..`")
        return frozenset(str(PurePosixPath(root)) for root in roots)
