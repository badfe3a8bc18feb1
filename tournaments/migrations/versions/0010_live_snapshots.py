"""live_snapshots: the latest public snapshot of each match in play.

Revision ID: 0010
Revises: 0009

A match played by `cardshark worker` or by a `cardshark tournament run` in another process
than the web page's is followed live through this table: the player writes the public table
of its match (what every seat knows, a decision behind) a few times a second and removes it
when the match ends; the web page reads it. Nothing else refers to it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create live_snapshots (a database made by a build with it already, then adopted by
    0001 as unversioned, keeps it)."""
    if "live_snapshots" not in sa.inspect(op.get_bind()).get_table_names():
        op.create_table(
            "live_snapshots",
            sa.Column("match_id", sa.Integer(), nullable=False),
            sa.Column("step", sa.Integer(), nullable=False),
            sa.Column("data", sa.JSON(), nullable=False),
            sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
            sa.PrimaryKeyConstraint("match_id"),
        )


def downgrade() -> None:
    """Drop live_snapshots."""
    op.drop_table("live_snapshots")
