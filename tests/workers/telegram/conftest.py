"""Telegram fixtures for the tests in this folder: its fake API, and settings pointing at it."""

from tests.platforms.telegram import fake, settings  # noqa: F401  (fixtures)
