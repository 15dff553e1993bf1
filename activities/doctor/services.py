"""The services every process shares: PostgreSQL and Temporal, reached as the processes reach them."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import asyncpg
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest

from activities.doctor.check import TIMEOUT_SECONDS, Check, redacted
from isolator.payloads import connect
from isolator.settings import Settings



async def service_checks(settings: Settings) -> list[Check]:
    checks = [await postgresql(settings)] if settings.database_url else []
    return [*checks, await temporal(settings)]


async def postgresql(settings: Settings) -> Check:
    name = "PostgreSQL: DATABASE_URL"
    try:
        connection = await asyncpg.connect(settings.database_url, timeout=TIMEOUT_SECONDS)
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as error:
        return Check.failed(name, f"cannot connect ({type(error).__name__}: {redacted(str(error), settings)})",
                            "start PostgreSQL, or correct DATABASE_URL's host, port, user, password or database")
    try:
        version = await connection.fetchval("SHOW server_version")
    finally:
        await connection.close()
    return Check.passed(name, f"PostgreSQL {version}")


async def temporal(settings: Settings) -> Check:
    name = f"Temporal: TEMPORAL_ADDRESS ({settings.temporal_address}), namespace {settings.temporal_namespace}"
    try:
        client = await asyncio.wait_for(connect(settings.temporal_address, settings.temporal_namespace),
                                        TIMEOUT_SECONDS)
    except (RuntimeError, OSError, asyncio.TimeoutError) as error:
        return Check.failed(name, f"cannot connect ({type(error).__name__})",
                            "start Temporal, or correct TEMPORAL_ADDRESS")
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=settings.temporal_namespace), timeout=timedelta(seconds=TIMEOUT_SECONDS))
    except Exception as error:  # noqa: BLE001 - Temporal's RPCError and the like: said, not raised
        return Check.failed(name, f"the namespace cannot be described ({type(error).__name__}: {error})",
                            "create it (`temporal operator namespace create`), or correct TEMPORAL_NAMESPACE")
    return Check.passed(name, "connected, the namespace exists")

