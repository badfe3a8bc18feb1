"""`cardshark db upgrade`: bring a database's schema to this cardshark's revision."""

from __future__ import annotations

from server.cli.common import (
    DbOption,
    clear_errors,
    command_group,
    console,
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
        return
    start = "the unversioned first schema" if before is None else f"revision {before}"
    console.print(f"{shown} upgraded from {start} to revision {after}", highlight=False)
