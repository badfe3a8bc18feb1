"""ratings.last_tournament_id: the latest tournament that rated a bot in a game.

Revision ID: 0007
Revises: 0006

Rating a set widens the sigma of each bot whose last rating came from another tournament.
Recording found that tournament by joining the bot's whole rating history to its matches at
every set: linear in the history, 6 ms a set at 10,000 rows a bot on SQLite, 37 ms at 50,000.
The ratings row now keeps it, filled here from the history (NULL where there is none).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

BACKFILL = """
UPDATE ratings SET last_tournament_id = (
    SELECT max(matches.tournament_id)
    FROM rating_history JOIN matches ON matches.id = rating_history.match_id
    WHERE rating_history.bot_id = ratings.bot_id AND rating_history.game = ratings.game
)
"""


def upgrade() -> None:
    """Add ratings.last_tournament_id and fill it from the rating history (a database made by
    a build with it already, then adopted by 0001 as unversioned, keeps its values)."""
    found = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("ratings")}
    if "last_tournament_id" not in found:
        op.add_column("ratings", sa.Column("last_tournament_id", sa.Integer(), nullable=True))
        op.execute(BACKFILL)


def downgrade() -> None:
    """Drop ratings.last_tournament_id."""
    with op.batch_alter_table("ratings") as ratings:
        ratings.drop_column("last_tournament_id")
