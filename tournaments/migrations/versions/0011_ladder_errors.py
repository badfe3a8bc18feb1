"""ladder_errors: the errors a ladder run met, with their time.

Revision ID: 0011
Revises: 0010

A ladder runs unattended; when one of its runs cannot play a set, leaves out a bot that
failed to start, or its workers' scheduler stops on a failure, the error is kept here so
that `cardshark ladder status` shows the last one (docs/ladder.md). Nothing else refers to
it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create ladder_errors (a database made by a build with it already, then adopted by
    0001 as unversioned, keeps it)."""
    if "ladder_errors" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "ladder_errors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_ladder_errors_tournament_id", "ladder_errors", ["tournament_id"])


def downgrade() -> None:
    """Drop ladder_errors."""
    op.drop_index("ix_ladder_errors_tournament_id", table_name="ladder_errors")
    op.drop_table("ladder_errors")
