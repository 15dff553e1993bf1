"""Apply each migration once, in order, in its own transaction, under an advisory lock."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import asyncpg

MIGRATIONS_DIR = Path(__file__).parent
# Arbitrary constant shared by every isolator process; serialises concurrent runners.
_ADVISORY_LOCK_KEY = 0x1507A708


class MigrationError(Exception):
    pass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        number, _, name = path.stem.partition("_")
        if not number.isdigit() or not name:
            raise MigrationError(f"migration file name must be NNN_name.sql: {path.name}")
        migrations.append(Migration(int(number), path.stem, path.read_text()))
    migrations.sort(key=lambda m: m.version)  # by number: `10_x` comes after `2_y`
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a version number")
    return migrations


async def apply_migrations(database_url: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations; return the names applied by this call."""
    migrations = discover(directory)
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute("SELECT pg_advisory_lock($1)", _ADVISORY_LOCK_KEY)
        try:
            await connection.execute(
                """CREATE TABLE IF NOT EXISTS schema_migrations (
                       version     integer PRIMARY KEY,
                       name        text NOT NULL,
                       checksum    text NOT NULL,
                       applied_at  timestamptz NOT NULL DEFAULT now())"""
            )
            applied = {
                row["version"]: row
                for row in await connection.fetch("SELECT version, name, checksum FROM schema_migrations")
            }
            # Check every applied migration before applying anything, so a refusal changes nothing.
            for migration in migrations:
                previous = applied.get(migration.version)
                if previous is not None and previous["checksum"] != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.name} changed after it was applied; "
                        "add a new migration instead of editing an applied one"
                    )
            done = []
            for migration in migrations:
                if migration.version in applied:
                    continue
                try:
                    async with connection.transaction():
                        await connection.execute(migration.sql)
                        await connection.execute(
                            "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                            migration.version, migration.name, migration.checksum,
                        )
                except asyncpg.PostgresError as error:
                    raise MigrationError(f"migration {migration.name} failed and was rolled back: {error}") from error
                done.append(migration.name)
            return done
        finally:
            await connection.execute("SELECT pg_advisory_unlock($1)", _ADVISORY_LOCK_KEY)
    finally:
        await connection.close()
