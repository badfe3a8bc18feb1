"""authors and bots.author_id: whose bot each bot is.

Revision ID: 0008
Revises: 0007

`cardshark author add NAME` registers someone who submits bots, with a key stored as a bot's
token is (its SHA-256 hex digest). Every bot belongs to an author; the organizer's own (`bot
add`) to the house author, which has no key. The bots of an existing database become the
house author's, made here when there are bots to own.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

HOUSE_AUTHOR = "house"  # tournaments.models.HOUSE_AUTHOR, kept here as this revision wrote it


def upgrade() -> None:
    """Create authors; add bots.author_id referencing it; give every bot to the house author."""
    found = sa.inspect(op.get_bind())
    if "authors" not in found.get_table_names():
        _create_authors()
    if "author_id" not in {c["name"] for c in found.get_columns("bots")}:
        _add_author_id()
    _house_owns_the_bots()


def _create_authors() -> None:
    op.create_table(
        "authors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=True),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_authors_name", "authors", ["name"], unique=True)
    op.create_index("ix_authors_key_hash", "authors", ["key_hash"], unique=True)


def _add_author_id() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # As in 0004: SQLite adds a column with its reference in place; batch mode would copy
        # `bots`, which other tables reference, and that copy fails their foreign keys.
        op.execute("ALTER TABLE bots ADD COLUMN author_id INTEGER REFERENCES authors (id)")
    else:
        op.add_column("bots", sa.Column("author_id", sa.Integer(), nullable=True))
        op.create_foreign_key("bots_author_id_fkey", "bots", "authors", ["author_id"], ["id"])
    op.create_index("ix_bots_author_id", "bots", ["author_id"])


def _house_owns_the_bots() -> None:
    bind = op.get_bind()
    bots = sa.table("bots", sa.column("author_id", sa.Integer()))
    authors = sa.table(
        "authors",
        sa.column("id", sa.Integer()),
        sa.column("name", sa.String()),
        sa.column("key_hash", sa.String()),
        sa.column("disabled", sa.Boolean()),
        sa.column("created", sa.DateTime(timezone=True)),
    )
    orphans = bind.execute(
        sa.select(sa.func.count()).select_from(bots).where(bots.c.author_id.is_(None))
    ).scalar_one()
    if not orphans:
        return
    house = bind.execute(sa.select(authors.c.id).where(authors.c.name == HOUSE_AUTHOR)).scalar()
    if house is None:
        op.execute(
            authors.insert().values(
                name=HOUSE_AUTHOR, key_hash=None, disabled=False, created=datetime.now(UTC)
            )
        )
        house = bind.execute(
            sa.select(authors.c.id).where(authors.c.name == HOUSE_AUTHOR)
        ).scalar_one()
    op.execute(bots.update().where(bots.c.author_id.is_(None)).values(author_id=house))


def downgrade() -> None:
    """Drop bots.author_id and authors."""
    op.drop_index("ix_bots_author_id", table_name="bots")
    with op.batch_alter_table("bots") as bots:
        bots.drop_column("author_id")
    op.drop_table("authors")
