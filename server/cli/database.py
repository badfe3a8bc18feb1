"""`cardshark db upgrade`: bring a database's schema to this cardshark's revision."""

from __future__ import annotations

from server.cli.common import (
    DbOption,
    clear_errors,
    command_group,
    console,
    fail,
    require_existing_database,
)
from tournaments.db import parse_url, safe_url, upgrade_schema

db_app = command_group("Maintain the database.")


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Migrate the database's schema to this cardshark's revision, keeping every row."""
    with clear_errors():
        require_existing_database(db)
        before, after = upgrade_schema(db)
    shown = safe_url(parse_url(db))
    if before == after:
        console.print(f"{shown} is at schema revision {after}; nothing to do", highlight=False)
    else:
        start = "the unversioned first schema" if before is None else f"revision {before}"
        console.print(f"{shown} upgraded from {start} to revision {after}", highlight=False)
    if parse_url(db).get_backend_name() == "postgresql":
        upgrade_task_queue(db)


def upgrade_task_queue(db: str | None) -> None:
    """Create or upgrade procrastinate's tables (the workers' queue) and say which."""
    # Imported here: procrastinate and psycopg come with the `postgres` extra only.
    import psycopg

    from server.workers.queue import upgrade_queue
    from server.workers.worker import conninfo

    with clear_errors():
        try:
            with psycopg.connect(conninfo(db)) as conn:
                before, after = upgrade_queue(conn)
        except psycopg.Error as exc:
            fail(f"the task queue's tables could not be made or upgraded: {exc}".strip())
    if before is None:
        said = f"created at procrastinate migration {after}"
    elif before == after:
        said = f"at procrastinate migration {after}; nothing to do"
    else:
        said = f"upgraded from procrastinate migration {before} to {after}"
    console.print(f"task queue: {said}", highlight=False)
