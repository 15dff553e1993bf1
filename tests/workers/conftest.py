"""Fixtures of the tests in this folder: the cleanup schedule's handle, and `isolator dev` started at will."""

from tests.dev_process import start_dev  # noqa: F401  (fixture)
from tests.schedules import schedule  # noqa: F401  (fixture)
