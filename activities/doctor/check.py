"""One check's result, and how a check that raised is still said in one line without a secret in it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import SecretStr

from isolator.settings import Settings

# How long a check waits for a platform or a service to answer.
TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Check:
    name: str  # what was checked, and with which variable
    ok: bool
    problem: str = ""  # what is wrong (empty when OK)
    fix: str = ""  # what to do about it (empty when OK)
    detail: str = ""  # what was found when OK: a version, a bot's name

    @classmethod
    def passed(cls, name: str, detail: str = "") -> Check:
        return cls(name, True, detail=detail)

    @classmethod
    def failed(cls, name: str, problem: str, fix: str) -> Check:
        return cls(name, False, problem, fix)

    def line(self) -> str:
        if self.ok:
            return f"OK    {self.name}" + (f": {self.detail}" if self.detail else "")
        return f"FAIL  {self.name}: {self.problem}. Fix: {self.fix}"


def secrets_of(settings: Settings) -> list[str]:
    """Every secret the settings hold, and DATABASE_URL's password: what no line may show."""
    found = [value.get_secret_value() for value in settings.__dict__.values() if isinstance(value, SecretStr)]
    password = urlsplit(settings.database_url or "").password
    return [secret for secret in [*found, password] if secret]


def redacted(text: str, settings: Settings) -> str:
    """`text` with the secrets hidden: an SDK's error may quote its URL, and Telegram's URL holds the token."""
    for secret in secrets_of(settings):
        text = text.replace(secret, "***")
    return text


def unforeseen(name: str, error: BaseException, settings: Settings) -> Check:
    """A check that raised what it did not expect fails alone, rather than hiding the others' lines."""
    said = redacted(str(error) or type(error).__name__, settings)
    return Check.failed(name, f"{type(error).__name__}: {said}", "see the error above, then run `isolator doctor` again")
