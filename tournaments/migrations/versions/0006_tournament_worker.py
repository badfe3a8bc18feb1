"""tournaments.worker: the worker a tournament with remote bots is played by.

Revision ID: 0006
Revises: 0005

Remote bots connect to one worker (`cardshark worker --name W --port P`); `tournament create
--worker W` queues the tournament's matches on that worker's own queue (`worker:W`) and
stores W here, so that whatever queues its matches again uses the same queue. NULL: any
worker plays it (the shared queue).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add tournaments.worker, nullable (a database made by a build with it already, then
    adopted by 0001 as unversioned, keeps it)."""
    found = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("tournaments")}
    if "worker" not in found:
        op.add_column("tournaments", sa.Column("worker", sa.String(), nullable=True))


def downgrade() -> None:
    """Drop tournaments.worker."""
    with op.batch_alter_table("tournaments") as tournaments:
        tournaments.drop_column("worker")
