"""Discord fixtures for the tests in this folder: its fake API and Gateway, settings pointing at them,
and the Gateway listener."""

from tests.platforms.discord import fake, listener, settings  # noqa: F401  (fixtures)
