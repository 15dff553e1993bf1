"""Discord fixtures for the tests in this folder: its fake API, and settings pointing at it."""

from tests.platforms.discord import fake, listener, settings  # noqa: F401  (fixtures)
