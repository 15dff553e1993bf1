"""Metrics and logs (docs/observability.md). Settings inherits them; traces take OpenTelemetry's own
variables (OTEL_EXPORTER_OTLP_ENDPOINT, …)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class ObservabilitySettings(BaseSettings):
    # A worker's own `GET /metrics` port (the API serves it on its own port). Unset: none.
    metrics_port: int | None = Field(None, ge=1, le=65535, validation_alias=_env("METRICS_PORT"))
    # The bearer token a scraper sends; it opens /metrics and nothing else.
    metrics_token: SecretStr | None = Field(None, validation_alias=_env("METRICS_TOKEN"))
    log_format: Literal["text", "json"] = Field("text", validation_alias=_env("LOG_FORMAT"))
