"""Slack fixtures for the tests in this folder: its fake API, and settings pointing at it."""

from tests.platforms.slack import fake, settings  # noqa: F401  (fixtures)
from tests.platforms.slack_socket import slack_socket, socket_settings  # noqa: F401,E402  (fixtures)
