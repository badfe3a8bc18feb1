"""matches: an index on (tournament_id, round, table_index), the set of a match.

Revision ID: 0002
Revises: 0001

Recording a match reads the other matches of its set, and recompute reads the open sets; with
only the tournament index that is a scan of the whole tournament per recorded match, which a
tournament of many thousand matches (workers on many machines) makes quadratic.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add the set index (a development build before this revision may have made it)."""
    present = {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("matches")}
    if "ix_matches_set" in present:
        return
    op.create_index("ix_matches_set", "matches", ["tournament_id", "round", "table_index"])


def downgrade() -> None:
    """Drop the set index."""
    op.drop_index("ix_matches_set", table_name="matches")
