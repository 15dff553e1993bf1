"""Every check at once, in a fixed order: the platforms, the agent, its model API, this host, the shared services."""

from __future__ import annotations

import asyncio

from activities.doctor.agent import agent_checks
from activities.doctor.check import Check, unforeseen
from activities.doctor.fingerprints import fingerprint_checks
from activities.doctor.host import host_checks
from activities.doctor.model_api import model_api_checks
from activities.doctor.platforms import platform_checks
from activities.doctor.services import service_checks
from isolator.settings import Settings


async def run_checks(settings: Settings) -> list[Check]:
    """The checks of what is configured; they wait on the network and subprocesses, so they run together."""
    groups = [*platform_checks(settings), agent_checks(settings), model_api_checks(settings), host_checks(settings),
              service_checks(settings), fingerprint_checks(settings)]
    results = await asyncio.gather(*groups, return_exceptions=True)
    checks: list[Check] = []
    for result in results:
        if isinstance(result, Check):
            checks.append(result)
        elif isinstance(result, list):
            checks.extend(result)
        else:
            checks.append(unforeseen("a check", result, settings))
    return checks


def all_ok(checks: list[Check]) -> bool:
    return all(check.ok for check in checks)
