"""The doctor's Slack checks against the fake Slack: its Web API, and its Socket Mode server."""

from tests.platforms.slack import fake, settings  # noqa: F401  (fixtures)
from tests.platforms.slack_socket import slack_socket, socket_settings  # noqa: F401  (fixtures)
