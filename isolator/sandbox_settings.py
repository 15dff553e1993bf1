"""The sandbox's settings (docs/sandbox.md). Settings inherits them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings

from isolator.egress_rules import parse_entry


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


def _listed(value: str | None) -> list[str]:
    return [part.strip().lower() for part in (value or "").replace(" ", ",").split(",") if part.strip()]


class SandboxSettings(BaseSettings):
    # Every user program runs in a bubblewrap sandbox (docs/sandbox.md); `off` runs them unconfined.
    sandbox: Literal["on", "off"] = Field("on", validation_alias=_env("SANDBOX"))
    # `egress`: only the allowed hosts, through the service's proxy; `open`: any address (unsafe); `off`: none.
    sandbox_network: Literal["egress", "open", "off"] = Field("egress", validation_alias=_env("SANDBOX_NETWORK"))
    # More hosts a sandboxed program may reach with `egress` (`host` or `host:port`, comma-separated; `*`:
    # the whole public internet); a loopback or private address only when listed with its port.
    sandbox_allowed_hosts: str | None = Field(None, validation_alias=_env("SANDBOX_ALLOWED_HOSTS"))
    # Folders (absolute, separated by `:`) every sandboxed program may write besides its worktree.
    sandbox_writable_paths: str | None = Field(None, validation_alias=_env("SANDBOX_WRITABLE_PATHS"))
    # Folders (absolute, separated by `:`) every sandboxed program may read besides the system's own
    # (`/usr`, `/etc`, ...): an operator's toolchains (`/opt/...`, a language's version manager).
    sandbox_readable_paths: str | None = Field(None, validation_alias=_env("SANDBOX_READABLE_PATHS"))
    # What one run may take (docs/sandbox.md): memory, processes (threads count), CPUs (unset: all but
    # one), and the size of its own `/tmp` and HOME, each a tmpfs in memory.
    sandbox_memory_mb: int = Field(4096, ge=64, validation_alias=_env("SANDBOX_MEMORY_MB"))
    sandbox_max_processes: int = Field(512, ge=16, validation_alias=_env("SANDBOX_MAX_PROCESSES"))
    sandbox_cpus: float | None = Field(None, gt=0, validation_alias=_env("SANDBOX_CPUS"))
    sandbox_tmp_mb: int = Field(1024, ge=16, validation_alias=_env("SANDBOX_TMP_MB"))

    @field_validator("sandbox_writable_paths", "sandbox_readable_paths")
    @classmethod
    def _absolute_paths(cls, value: str | None) -> str | None:
        if value is not None and not all(Path(part).is_absolute() for part in value.split(":") if part):
            raise ValueError("must be absolute paths separated by `:`")
        return value

    @field_validator("sandbox_allowed_hosts")
    @classmethod
    def _allow_entries(cls, value: str | None) -> str | None:
        for word in _listed(value):
            parse_entry(word)  # its InvalidEntry (a ValueError) says what is wrong
        return value

    @property
    def sandbox_writable(self) -> list[Path]:
        return [Path(part) for part in (self.sandbox_writable_paths or "").split(":") if part]

    @property
    def sandbox_readable(self) -> list[Path]:
        return [Path(part) for part in (self.sandbox_readable_paths or "").split(":") if part]

    @property
    def sandbox_extra_hosts(self) -> list[str]:
        return _listed(self.sandbox_allowed_hosts)
