"""The migration runner on a real PostgreSQL: idempotent, safe to race, strict about edits, atomic per file.

Every test gets a fresh database on the session server, so the shared `isolator` database is never touched.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from migrations.runner import MIGRATIONS_DIR, MigrationError, apply_migrations, discover
from workers.postgres import EmbeddedPostgres

ALL = [migration.name for migration in discover()]
# The console script installed next to this interpreter in the virtualenv.
ISOLATOR = Path(sys.executable).parent / "isolator"


def with_database(url: str, name: str) -> str:
    """The same server URL (`postgresql://user:@/db?host=socket`) pointing at another database."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@pytest.fixture
async def fresh_db(postgres: EmbeddedPostgres) -> AsyncIterator[str]:
    """URL of a new, empty database, dropped after the test."""
    name = f"mig_{uuid.uuid4().hex[:12]}"
    admin_url = with_database(postgres.url, "postgres")
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    yield with_database(postgres.url, name)
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def conn(fresh_db: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(fresh_db)
    yield connection
    await connection.close()


async def recorded(conn: asyncpg.Connection) -> list[tuple]:
    rows = await conn.fetch("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version")
    return [tuple(row) for row in rows]


async def table_exists(conn: asyncpg.Connection, table: str) -> bool:
    return await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", f"public.{table}")


def migrations_copy(tmp_path: Path, **extra: str) -> Path:
    """A directory with the real migrations plus `extra` files (`name` -> SQL)."""
    directory = tmp_path / "migrations"
    directory.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        shutil.copy(path, directory / path.name)
    for name, sql in extra.items():
        (directory / f"{name}.sql").write_text(sql)
    return directory


# --- discovery -------------------------------------------------------------------------------------------


def test_discover_orders_by_version_number_and_rejects_bad_names(tmp_path: Path) -> None:
    (tmp_path / "10_tenth.sql").write_text("SELECT 10;")
    (tmp_path / "2_second.sql").write_text("SELECT 2;")
    # By number, not by file name: "10_…" sorts before "2_…" as text.
    assert [m.version for m in discover(tmp_path)] == [2, 10]

    (tmp_path / "002_again.sql").write_text("SELECT 2;")
    with pytest.raises(MigrationError, match="share a version"):
        discover(tmp_path)
    (tmp_path / "002_again.sql").unlink()

    (tmp_path / "initial.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="NNN_name.sql: initial.sql"):
        discover(tmp_path)


# --- applying --------------------------------------------------------------------------------------------


async def test_applying_twice_applies_everything_once(fresh_db: str, conn: asyncpg.Connection) -> None:
    assert await apply_migrations(fresh_db) == ALL
    before = await recorded(conn)
    assert [row[1] for row in before] == ALL

    assert await apply_migrations(fresh_db) == []
    assert await recorded(conn) == before, "same rows, same checksums, same applied_at"


async def test_concurrent_runners_in_one_process_apply_each_migration_once(
    fresh_db: str, conn: asyncpg.Connection
) -> None:
    results = await asyncio.gather(*(apply_migrations(fresh_db) for _ in range(6)))
    assert sorted(results, key=len, reverse=True) == [ALL] + [[]] * 5, "exactly one runner did the work"
    assert [row[1] for row in await recorded(conn)] == ALL
    assert await table_exists(conn, "isolation_environments")


async def test_two_migrate_processes_at_the_same_moment_both_succeed(
    fresh_db: str, conn: asyncpg.Connection
) -> None:
    """`isolator migrate` started twice at once, as two replicas booting together would."""
    from migrations.runner import _ADVISORY_LOCK_KEY

    # Hold the runners' lock so both processes are provably inside `apply_migrations` at the
    # same time, then let them race for it.
    await conn.execute("SELECT pg_advisory_lock($1)", _ADVISORY_LOCK_KEY)
    env = {**os.environ, "DATABASE_URL": fresh_db}
    processes = [
        await asyncio.create_subprocess_exec(
            str(ISOLATOR), "migrate", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        for _ in range(2)
    ]
    try:
        for _ in range(600):
            waiting = await conn.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            if waiting == 2 or any(process.returncode is not None for process in processes):
                break
            await asyncio.sleep(0.05)
        assert waiting == 2, "both processes should be waiting for the migration lock"
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _ADVISORY_LOCK_KEY)
    outputs = [await asyncio.wait_for(process.communicate(), timeout=60) for process in processes]

    for process, (stdout, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr.decode()
    said = sorted(stdout.decode().strip() for stdout, _ in outputs)
    assert said == sorted(["applied: " + ", ".join(ALL), "up to date"])
    assert [row[1] for row in await recorded(conn)] == ALL, "each migration recorded exactly once"
    for table in ("codebases", "isolation_environments", "conversations", "outbound_messages"):
        assert await table_exists(conn, table), table


@pytest.mark.parametrize("edited", ["001_initial", "913_later"])
async def test_an_edited_applied_migration_is_refused_and_nothing_changes(
    fresh_db: str, conn: asyncpg.Connection, tmp_path: Path, edited: str
) -> None:
    directory = migrations_copy(tmp_path, **{"913_later": "CREATE TABLE later_things (id int);"})
    await apply_migrations(fresh_db, directory=directory)
    before = await recorded(conn)

    # A pending migration (sorting before the edited one, for "913_later") must not run either. (Numbers far
    # above the real migrations', so that a new real one never takes theirs.)
    (directory / "912_between.sql").write_text("CREATE TABLE between_things (id int);")
    with (directory / f"{edited}.sql").open("a") as file:
        file.write("\n-- an innocent-looking edit\n")

    with pytest.raises(MigrationError, match=f"migration {edited} changed after it was applied"):
        await apply_migrations(fresh_db, directory=directory)
    assert await recorded(conn) == before
    assert not await table_exists(conn, "between_things")


async def test_a_failing_migration_is_rolled_back_whole_and_not_recorded(
    fresh_db: str, conn: asyncpg.Connection, tmp_path: Path
) -> None:
    directory = migrations_copy(
        tmp_path,
        **{
            "912_good": "CREATE TABLE good_things (id int);",
            # The first statement succeeds; the second fails, so the first must be undone too.
            "913_bad": "CREATE TABLE bad_things (id int);\nINSERT INTO no_such_table VALUES (1);",
        },
    )
    with pytest.raises(MigrationError, match=r"913_bad failed.*no_such_table"):
        await apply_migrations(fresh_db, directory=directory)

    assert [row[1] for row in await recorded(conn)] == [*ALL, "912_good"], "earlier migrations stay applied"
    assert await table_exists(conn, "good_things")
    assert not await table_exists(conn, "bad_things")

    # Once fixed, only the failed migration runs.
    (directory / "913_bad.sql").write_text("CREATE TABLE bad_things (id int);")
    assert await apply_migrations(fresh_db, directory=directory) == ["913_bad"]
    assert await table_exists(conn, "bad_things")


# --- schema facts the service relies on -------------------------------------------------------------------


@pytest.fixture
async def schema(fresh_db: str, conn: asyncpg.Connection) -> asyncpg.Connection:
    await apply_migrations(fresh_db)
    return conn


async def add_codebase(conn: asyncpg.Connection, name: str) -> uuid.UUID:
    return await conn.fetchval(
        "INSERT INTO codebases (name, canonical_path, default_branch, host) VALUES ($1, $2, 'main', 'h') RETURNING id",
        name, f"/repos/{name}",
    )


async def add_environment(
    conn: asyncpg.Connection, codebase: uuid.UUID, workflow_id: str, path: str, status: str = "active"
) -> None:
    await conn.execute(
        """INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name, status)
           VALUES ($1, 'thread', $2, $3, 'b', $4)""",
        codebase, workflow_id, path, status,
    )


async def test_one_active_environment_per_identity(schema: asyncpg.Connection) -> None:
    codebase = await add_codebase(schema, "one")
    await add_environment(schema, codebase, "conv", "/wt/a")
    with pytest.raises(asyncpg.UniqueViolationError, match="isolation_environments_active_identity"):
        await add_environment(schema, codebase, "conv", "/wt/b")

    # Destroyed rows do not count: history may hold many, beside one active row.
    await add_environment(schema, codebase, "conv", "/wt/c", status="destroyed")
    await add_environment(schema, codebase, "conv", "/wt/d", status="destroyed")
    # The same workflow id in another codebase, or as another type, is another identity.
    other = await add_codebase(schema, "two")
    await add_environment(schema, other, "conv", "/wt/e")
    await schema.execute(
        """INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name)
           VALUES ($1, 'issue', 'conv', '/wt/f', 'b')""",
        codebase,
    )
    assert await schema.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == 3


async def test_one_active_environment_per_working_path(schema: asyncpg.Connection) -> None:
    codebase = await add_codebase(schema, "one")
    await add_environment(schema, codebase, "first", "/wt/same")
    with pytest.raises(asyncpg.UniqueViolationError, match="isolation_environments_active_path"):
        await add_environment(schema, codebase, "second", "/wt/same")
    # Once destroyed, the path may be used again.
    await schema.execute("UPDATE isolation_environments SET status = 'destroyed' WHERE workflow_id = 'first'")
    await add_environment(schema, codebase, "second", "/wt/same")


async def test_environment_type_and_status_are_checked(schema: asyncpg.Connection) -> None:
    codebase = await add_codebase(schema, "one")
    with pytest.raises(asyncpg.CheckViolationError):
        await add_environment(schema, codebase, "x", "/wt/x", status="paused")
    with pytest.raises(asyncpg.CheckViolationError):
        await schema.execute(
            """INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name)
               VALUES ($1, 'chat', 'x', '/wt/x', 'b')""",
            codebase,
        )
