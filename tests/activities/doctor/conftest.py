"""The doctor's checks in process, against the platforms' fakes."""

from tests.platforms.telegram import fake, settings  # noqa: F401  (fixtures)
