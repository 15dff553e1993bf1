"""The GitHub App's settings (docs/platforms.md#github). Settings inherits them.

With GITHUB_APP_ID and a key, the service acts as the App (`<slug>[bot]`) with an installation token per
installation; GITHUB_TOKEN keeps working without them, and loses to them when both are set. An App set
up through the dashboard's "Connect GitHub" page is stored in PostgreSQL, encrypted with
ISOLATOR_SECRET_KEY, and needs none of these.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class GitHubAppSettings(BaseSettings):
    github_app_id: int | None = Field(None, ge=1, validation_alias=_env("GITHUB_APP_ID"))
    # The App's private key (PEM), given inline or as a file; never both.
    github_app_private_key: SecretStr | None = Field(None, validation_alias=_env("GITHUB_APP_PRIVATE_KEY"))
    github_app_private_key_file: Path | None = Field(None, validation_alias=_env("GITHUB_APP_PRIVATE_KEY_FILE"))
    # A repository added to the App's installation is registered by itself; off: the chat says how.
    github_auto_register: bool = Field(False, validation_alias=_env("GITHUB_AUTO_REGISTER"))
    # A Fernet key (`isolator secret-key` prints one) that encrypts what the service stores for itself,
    # such as an App made through the dashboard.
    isolator_secret_key: SecretStr | None = Field(None, validation_alias=_env("ISOLATOR_SECRET_KEY"))

    @model_validator(mode="after")
    def _app_has_one_key(self) -> GitHubAppSettings:
        if self.github_app_private_key is not None and self.github_app_private_key_file is not None:
            raise ValueError("GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_FILE are both set: keep one")
        has_key = self.github_app_private_key is not None or self.github_app_private_key_file is not None
        if self.github_app_id is not None and not has_key:
            raise ValueError("GITHUB_APP_ID needs the App's private key: set GITHUB_APP_PRIVATE_KEY (the PEM) or "
                             "GITHUB_APP_PRIVATE_KEY_FILE (its path)")
        if has_key and self.github_app_id is None:
            raise ValueError("a GitHub App private key is set without GITHUB_APP_ID: set the App's id")
        if self.github_app_private_key_file is not None and not self.github_app_private_key_file.is_file():
            raise ValueError(f"GITHUB_APP_PRIVATE_KEY_FILE: no file at {self.github_app_private_key_file}")
        return self

    @property
    def github_app_key_pem(self) -> str | None:
        """The App's private key (PEM) from the environment, read from its file when given as one."""
        if self.github_app_private_key is not None:
            return self.github_app_private_key.get_secret_value().replace("\\n", "\n")
        if self.github_app_private_key_file is not None:
            return self.github_app_private_key_file.expanduser().read_text()
        return None
