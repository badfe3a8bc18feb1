"""matches: the (tournament_id, status) index gains schedule_index.

Revision ID: 0005
Revises: 0004

Recording a match asks whether a later match of its game is already recorded; with
(tournament_id, status) alone that scanned every finished match of the tournament once per
recorded match, quadratic in the tournament's size. With schedule_index it is one probe. The
old index's queries (a tournament's matches by status) use the new one's prefix.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

OLD, NEW = "ix_matches_tournament_status", "ix_matches_rated"


def upgrade() -> None:
    """Replace the (tournament_id, status) index by (tournament_id, status, schedule_index)
    (a database made by a build with the new index, then adopted as unversioned, has it)."""
    present = {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("matches")}
    if NEW not in present:
        op.create_index(NEW, "matches", ["tournament_id", "status", "schedule_index"])
    if OLD in present:
        op.drop_index(OLD, table_name="matches")


def downgrade() -> None:
    """Put the (tournament_id, status) index back."""
    op.create_index(OLD, "matches", ["tournament_id", "status"])
    op.drop_index(NEW, table_name="matches")
