"""procrastinate's own tables, versioned by the name of the newest of its migrations applied.

procrastinate ships its schema (schema.sql) and its migrations (sql/migrations/*.sql, named by
version) and leaves applying them to the application. `cardshark db upgrade` creates the
tables or applies every migration newer than the recorded one, in one transaction; a worker or
`tournament create` creates them on first use, and refuses a queue older than this
procrastinate's until `db upgrade` has run. The version is kept in `queue_schema_version`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import procrastinate
from procrastinate.schema import SchemaManager

from tournaments.errors import StorageError

VERSION_TABLE = "queue_schema_version"
LOCK_KEY = 1886548845  # "proc": creators and upgraders of the queue's tables take turns
# The newest migration of the schema procrastinate 3.10 makes: what a queue made on first use
# by a cardshark before this table existed (procrastinate >= 3.10 from the start) is at.
BASELINE = "03.04.00_50_post_add_retry_failed_job_procedure"


class QueueSchemaOutdatedError(StorageError):
    """The task queue's tables are older than this procrastinate's."""

    def __init__(self, found: str, newest: str) -> None:
        self.found, self.newest = found, newest
        super().__init__(
            f"the task queue's schema is at procrastinate migration {found}, this cardshark "
            f"needs {newest}: run `cardshark db upgrade` with the same --db first"
        )


def migrations(directory: Path | None = None) -> list[Path]:
    """procrastinate's migration files, oldest first (their names sort by version)."""
    where = Path(directory or SchemaManager.get_migrations_path())
    return sorted(where.glob("*.sql"), key=lambda p: p.name)


def newest(directory: Path | None = None) -> str:
    """The version (file name without .sql) of the newest migration."""
    return migrations(directory)[-1].stem


def _scalar(conn: Any, query: str) -> Any:
    row = conn.execute(query).fetchone()
    return None if row is None else row[0]


def upgrade_queue(conn: Any, directory: Path | None = None) -> tuple[str | None, str]:
    """Create or upgrade procrastinate's tables on a psycopg connection in one transaction;
    returns (version before, version after), before None when there were no tables."""
    target = newest(directory)
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version text NOT NULL)")
        if _scalar(conn, "SELECT to_regclass('procrastinate_jobs') IS NULL"):
            conn.execute(SchemaManager.get_schema())
            _record(conn, target)
            return None, target
        found = _scalar(conn, f"SELECT version FROM {VERSION_TABLE}") or BASELINE
        for script in migrations(directory):
            if script.stem > found:
                conn.execute(script.read_text(encoding="utf-8"))
        _record(conn, target)
        return found, target


def _record(conn: Any, version: str) -> None:
    conn.execute(f"DELETE FROM {VERSION_TABLE}")
    conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (version,))


async def ensure_queue(app: procrastinate.App) -> None:
    """Create procrastinate's tables on first use (at this procrastinate's newest version);
    QueueSchemaOutdatedError when they are older. Concurrent callers take turns on a lock."""
    connector = app.connector
    assert isinstance(connector, procrastinate.PsycopgConnector)
    target = newest()
    async with connector.pool.connection() as conn, conn.transaction():
        await conn.execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version text NOT NULL)")
        absent = await (
            await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NULL")
        ).fetchone()
        if absent is not None and absent[0]:
            await conn.execute(SchemaManager.get_schema())
            await conn.execute(f"DELETE FROM {VERSION_TABLE}")
            await conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (target,))
            return
        row = await (await conn.execute(f"SELECT version FROM {VERSION_TABLE}")).fetchone()
        found = row[0] if row is not None else BASELINE
        if found < target:
            raise QueueSchemaOutdatedError(found, target)
