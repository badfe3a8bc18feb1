"""Alembic's entry point: migrations run on the connection `tournaments.schema` hands in."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import tournaments.store  # noqa: F401  (registers every table with SQLModel's metadata)

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("cardshark migrations run through `cardshark db upgrade`, not alembic")
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    # SQLite alters a table by copying it; batch mode does that for ALTER-like operations.
    render_as_batch=True,
    transactional_ddl=True,
)
with context.begin_transaction():
    context.run_migrations()
