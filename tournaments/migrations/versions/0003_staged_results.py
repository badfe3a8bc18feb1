"""staged_results: results of matches played by workers, waiting for their turn to be rated.

Revision ID: 0003
Revises: 0002

Workers on many machines finish matches in any order; a result is staged here and recorded
(rated) only when every earlier match of the schedule is, so ratings equal a one-machine run.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create staged_results."""
    op.create_table(
        "staged_results",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("schedule_index", sa.Integer(), nullable=False),
        sa.Column("outcomes", sa.JSON(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=True),
        sa.Column("worker", sa.String(), nullable=False),
        sa.Column("staged", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"]),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"]),
        sa.PrimaryKeyConstraint("match_id"),
    )
    op.create_index("ix_staged_results_tournament_id", "staged_results", ["tournament_id"])


def downgrade() -> None:
    """Drop staged_results."""
    op.drop_table("staged_results")
