"""Settings of a deployment with several worker hosts (docs/operations.md#scale-out). Settings inherits them."""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class HostSettings(BaseSettings):
    # A message whose codebase's host has no worker waits this long for it, then is answered unrun.
    host_wait_hours: float = Field(24, gt=0, le=24 * 30, validation_alias=_env("HOST_WAIT_HOURS"))
    # Archives are also pushed to origin under refs/isolator/archive/*, so a lost disk loses none.
    archive_push: bool = Field(False, validation_alias=_env("ARCHIVE_PUSH"))
    # On SIGTERM (or `isolator worker --drain`), agent runs in flight may finish for this long.
    worker_drain_seconds: float = Field(600, ge=0, le=24 * 3600, validation_alias=_env("WORKER_DRAIN_SECONDS"))
