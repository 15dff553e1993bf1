"""The cleanup schedule's handle, for the tests in this folder."""

from tests.schedules import schedule  # noqa: F401  (fixture)
