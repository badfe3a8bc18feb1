"""The first released schema: the tables create_all made before cardshark used Alembic.

Revision ID: 0001
Revises:

A database from before Alembic has no version; `cardshark db upgrade` runs this revision on
it, which creates only the tables it lacks (releases before tournament_goals and
rating_method had fewer), so its rows stay as they are.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

_UTC = sa.DateTime(timezone=True)
_TEXT = sa.String()


def _tables() -> list[tuple[str, list[sa.schema.SchemaItem], list[tuple[str, list[str], bool]]]]:
    """Each table's columns and constraints, then its indexes (name, columns, unique)."""
    fk = sa.ForeignKeyConstraint
    return [
        (
            "bots",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("name", sa.String(length=64), nullable=False),
                sa.Column("token_hash", sa.String(length=64), nullable=False),
                sa.Column("command", _TEXT, nullable=True),
                sa.Column("created", _UTC, nullable=False),
                sa.Column("removed", _UTC, nullable=True),
                sa.PrimaryKeyConstraint("id"),
            ],
            [("ix_bots_name", ["name"], True), ("ix_bots_token_hash", ["token_hash"], True)],
        ),
        (
            "rating_method",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("version", sa.Integer(), nullable=False),
                sa.PrimaryKeyConstraint("id"),
            ],
            [],
        ),
        (
            "tournaments",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("name", _TEXT, nullable=True),
                sa.Column("game", _TEXT, nullable=False),
                sa.Column("options", sa.JSON(), nullable=False),
                sa.Column("format", _TEXT, nullable=False),
                sa.Column("seats", sa.Integer(), nullable=False),
                sa.Column("rounds", sa.Integer(), nullable=False),
                sa.Column("tables", sa.Integer(), nullable=True),
                sa.Column("seed", sa.BigInteger(), nullable=False),
                sa.Column("clock_ms", sa.Integer(), nullable=False),
                sa.Column("bank_ms", sa.Integer(), nullable=False),
                sa.Column("ts_mu", sa.Double(), nullable=False),
                sa.Column("ts_sigma", sa.Double(), nullable=False),
                sa.Column("ts_beta", sa.Double(), nullable=False),
                sa.Column("ts_tau", sa.Double(), nullable=False),
                sa.Column("ts_draw_probability", sa.Double(), nullable=False),
                sa.Column("status", _TEXT, nullable=False),
                sa.Column("created", _UTC, nullable=False),
                sa.PrimaryKeyConstraint("id"),
            ],
            [
                ("ix_tournaments_game", ["game"], False),
                ("ix_tournaments_status", ["status"], False),
            ],
        ),
        (
            "matches",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("tournament_id", sa.Integer(), nullable=False),
                sa.Column("schedule_index", sa.Integer(), nullable=False),
                sa.Column("attempt", sa.Integer(), nullable=False),
                sa.Column("round", sa.Integer(), nullable=False),
                sa.Column("table_index", sa.Integer(), nullable=False),
                sa.Column("rotation", sa.Integer(), nullable=False),
                sa.Column("seed", sa.BigInteger(), nullable=False),
                sa.Column("seats", sa.JSON(), nullable=False),
                sa.Column("status", _TEXT, nullable=False),
                sa.Column("result", sa.JSON(), nullable=True),
                sa.Column("record", sa.JSON(), nullable=True),
                sa.Column("started", _UTC, nullable=True),
                sa.Column("finished", _UTC, nullable=True),
                sa.PrimaryKeyConstraint("id"),
                sa.UniqueConstraint("tournament_id", "schedule_index", "attempt"),
                fk(["tournament_id"], ["tournaments.id"]),
            ],
            [
                ("ix_matches_tournament_id", ["tournament_id"], False),
                ("ix_matches_tournament_status", ["tournament_id", "status"], False),
            ],
        ),
        (
            "ratings",
            [
                sa.Column("bot_id", sa.Integer(), nullable=False),
                sa.Column("game", _TEXT, nullable=False),
                sa.Column("mu", sa.Double(), nullable=False),
                sa.Column("sigma", sa.Double(), nullable=False),
                sa.Column("matches", sa.Integer(), nullable=False),
                sa.Column("score_sum", sa.Double(), nullable=False),
                sa.Column("faults", sa.Integer(), nullable=False),
                sa.PrimaryKeyConstraint("bot_id", "game"),
                fk(["bot_id"], ["bots.id"]),
            ],
            [],
        ),
        (
            "tournament_entrants",
            [
                sa.Column("tournament_id", sa.Integer(), nullable=False),
                sa.Column("position", sa.Integer(), nullable=False),
                sa.Column("bot_id", sa.Integer(), nullable=False),
                sa.PrimaryKeyConstraint("tournament_id", "position"),
                fk(["tournament_id"], ["tournaments.id"]),
                fk(["bot_id"], ["bots.id"]),
            ],
            [("ix_tournament_entrants_bot_id", ["bot_id"], False)],
        ),
        (
            "tournament_goals",
            [
                sa.Column("tournament_id", sa.Integer(), nullable=False),
                sa.Column("confidence", sa.Double(), nullable=False),
                sa.Column("max_rounds", sa.Integer(), nullable=False),
                sa.PrimaryKeyConstraint("tournament_id"),
                fk(["tournament_id"], ["tournaments.id"]),
            ],
            [],
        ),
        (
            "rating_history",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("bot_id", sa.Integer(), nullable=False),
                sa.Column("game", _TEXT, nullable=False),
                sa.Column("match_id", sa.Integer(), nullable=False),
                sa.Column("mu_before", sa.Double(), nullable=False),
                sa.Column("sigma_before", sa.Double(), nullable=False),
                sa.Column("mu_after", sa.Double(), nullable=False),
                sa.Column("sigma_after", sa.Double(), nullable=False),
                sa.PrimaryKeyConstraint("id"),
                sa.UniqueConstraint("match_id", "bot_id"),
                fk(["bot_id"], ["bots.id"]),
                fk(["match_id"], ["matches.id"]),
            ],
            [
                ("ix_rating_history_game_bot", ["game", "bot_id"], False),
                ("ix_rating_history_match_id", ["match_id"], False),
            ],
        ),
        (
            "seat_results",
            [
                sa.Column("id", sa.Integer(), nullable=False),
                sa.Column("match_id", sa.Integer(), nullable=False),
                sa.Column("seat", sa.Integer(), nullable=False),
                sa.Column("bot_id", sa.Integer(), nullable=False),
                sa.Column("score", sa.Double(), nullable=False),
                sa.Column("rank", sa.Integer(), nullable=False),
                sa.Column("faults", sa.Integer(), nullable=False),
                sa.Column("forfeited", sa.Boolean(), nullable=False),
                sa.PrimaryKeyConstraint("id"),
                sa.UniqueConstraint("match_id", "seat"),
                fk(["match_id"], ["matches.id"]),
                fk(["bot_id"], ["bots.id"]),
            ],
            [
                ("ix_seat_results_bot_id", ["bot_id"], False),
                ("ix_seat_results_match_id", ["match_id"], False),
            ],
        ),
    ]


def upgrade() -> None:
    """Create each first-schema table (with its indexes) that the database does not have."""
    present = set(sa.inspect(op.get_bind()).get_table_names())
    for name, items, indexes in _tables():
        if name in present:
            continue
        op.create_table(name, *items)
        for index, columns, unique in indexes:
            op.create_index(index, name, columns, unique=unique)


def downgrade() -> None:
    """Drop every table, the last created first."""
    for name, _, _ in reversed(_tables()):
        op.drop_table(name)
