"""The schema's version: Alembic revisions, the check every open makes, and the upgrade."""

# A new database is made with create_all and stamped at the head revision (one statement per
# table instead of replaying every migration); a test holds the migrations' head equal to the
# models, so both ways give the same schema.

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from tournaments.errors import SchemaNewerError, SchemaOutdatedError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version"


@lru_cache(maxsize=1)
def scripts() -> ScriptDirectory:
    """The migration scripts shipped with this cardshark."""
    return ScriptDirectory(str(MIGRATIONS))


def head() -> str:
    """The newest schema revision this cardshark knows."""
    revision = scripts().get_current_head()
    assert revision is not None, "the migrations have no head"
    return revision


def revision_of(connection: Connection) -> str | None:
    """The database's schema revision (None when it has no version table)."""
    return MigrationContext.configure(connection).get_current_revision()


def is_empty(connection: Connection) -> bool:
    """True when the database holds none of cardshark's tables (others' tables may be there)."""
    ours = set(SQLModel.metadata.tables) | {VERSION_TABLE}
    return not ours & set(inspect(connection).get_table_names())


def prepare(connection: Connection, shown_url: str) -> None:
    """Create an empty database at the head revision; refuse one at another revision."""
    newest = head()
    if is_empty(connection):
        SQLModel.metadata.create_all(connection)
        MigrationContext.configure(connection).stamp(scripts(), newest)
        return
    found = revision_of(connection)
    if found == newest:
        return
    if found is None or _known(found):
        raise SchemaOutdatedError(shown_url, found, newest)
    raise SchemaNewerError(shown_url, found, newest)


def _known(revision: str) -> bool:
    return any(script.revision == revision for script in scripts().walk_revisions())


def upgrade(connection: Connection, shown_url: str, target: str = "head") -> tuple[str | None, str]:
    """Bring the database to the target revision; returns (revision before, revision after)."""
    newest = head() if target == "head" else target
    if is_empty(connection) and target == "head":
        prepare(connection, shown_url)
        return None, newest
    found = revision_of(connection)
    if found is not None and not _known(found):
        raise SchemaNewerError(shown_url, found, newest)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    # An unversioned database is one from before Alembic: revision 0001 adopts it.
    command.upgrade(config, target)
    return found, newest
