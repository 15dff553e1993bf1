"""GitHub fixtures for the tests in this folder: the fake GitHub API, and settings pointing at it."""

from tests.platforms.github import fake, settings  # noqa: F401  (fixtures)
