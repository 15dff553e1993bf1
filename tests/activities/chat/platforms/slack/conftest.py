"""Slack fixtures for the tests in this folder: the fake Slack API, and settings pointing at it."""

from tests.platforms.slack import fake, settings  # noqa: F401  (fixtures)
