"""submissions, bots.version and bots.prior_mu: bots sent by their authors, and versions.

Revision ID: 0009
Revises: 0008

An author's submission (the Submissions service, docs/submitting.md) is stored with its
archive's digest and its state: received, building, testing, then accepted (with the bot it
became) or rejected (with why). A bot accepted again under its name becomes the next version
(bots.version, 1 for every bot before), starting from its predecessor's mu in each game
(bots.prior_mu).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add bots.version (1 for every bot) and bots.prior_mu; create submissions."""
    found = sa.inspect(op.get_bind())
    if "version" not in {c["name"] for c in found.get_columns("bots")}:
        version = sa.Column("version", sa.Integer(), nullable=False, server_default="1")
        op.add_column("bots", version)
    if "prior_mu" not in {c["name"] for c in found.get_columns("bots")}:
        op.add_column("bots", sa.Column("prior_mu", sa.JSON(), nullable=True))
    if "submissions" not in found.get_table_names():
        _create_submissions()


def _create_submissions() -> None:
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("games", sa.JSON(), nullable=False),
        sa.Column("command", sa.String(), nullable=False),
        sa.Column("build", sa.String(), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.String(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["author_id"], ["authors.id"]),
        sa.ForeignKeyConstraint(["digest"], ["bot_archives.digest"]),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_submissions_author_id", "submissions", ["author_id"])


def downgrade() -> None:
    """Drop submissions, bots.version and bots.prior_mu."""
    op.drop_index("ix_submissions_author_id", table_name="submissions")
    op.drop_table("submissions")
    with op.batch_alter_table("bots") as bots:
        bots.drop_column("version")
        bots.drop_column("prior_mu")
