"""bot_archives and bots.code_digest: a managed bot's code stored in the database.

Revision ID: 0004
Revises: 0003

`bot add NAME --dir DIR --command CMD` stores DIR as a gzipped tar keyed by the SHA-256 of
the tar; the bot names it by that digest. Workers on any machine unpack it once per digest
and run CMD in it, so a bot's code no longer has to be at the same path on every machine.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create bot_archives; add bots.code_digest referencing it (a database made by a build
    with these already, then adopted by 0001 as unversioned, keeps them)."""
    found = sa.inspect(op.get_bind())
    if "bot_archives" not in found.get_table_names():
        _create_archives()
    if "code_digest" not in {c["name"] for c in found.get_columns("bots")}:
        _add_code_digest()


def _create_archives() -> None:
    op.create_table(
        "bot_archives",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest"),
    )


def _add_code_digest() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # SQLite adds a column with its reference in place; batch mode would copy `bots`,
        # which other tables reference, and that copy fails their foreign keys.
        op.execute(
            "ALTER TABLE bots ADD COLUMN code_digest VARCHAR(64) REFERENCES bot_archives (digest)"
        )
    else:
        op.add_column("bots", sa.Column("code_digest", sa.String(length=64), nullable=True))
        op.create_foreign_key(
            "bots_code_digest_fkey", "bots", "bot_archives", ["code_digest"], ["digest"]
        )
    op.create_index("ix_bots_code_digest", "bots", ["code_digest"])


def downgrade() -> None:
    """Drop bots.code_digest and bot_archives."""
    op.drop_index("ix_bots_code_digest", table_name="bots")
    with op.batch_alter_table("bots") as bots:
        bots.drop_column("code_digest")
    op.drop_table("bot_archives")
