"""Live snapshots: the public table of each match in play, for web pages in other processes.

The process that plays a match writes its latest snapshot (one row per match, replaced) and
removes it when the attempt ends; a web page reads it with the match's status, and shows it
only while the match is not final (a row a killed player left behind is never shown).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, bindparam, delete, insert, update
from sqlmodel import SQLModel, col

from tournaments.models import LiveSnapshot, utc_now
from tournaments.store.base import StoreBase


@dataclass(frozen=True)
class LiveRead:
    """A match's status and its latest published snapshot (None: none published)."""

    status: str
    snapshot: dict[str, Any] | None


_LIVE: Table = SQLModel.metadata.tables[LiveSnapshot.__tablename__]
# A match's snapshot is written a few times a second while it plays: SQL statements built
# once (their compiled form cached), an UPDATE and, the first time, an INSERT, instead of
# the ORM's load, flush and per-statement machinery (about twice the CPU).
_REPLACE_LIVE = (
    update(_LIVE)
    .where(_LIVE.c.match_id == bindparam("match"))
    .values(step=bindparam("step"), data=bindparam("data"), updated=bindparam("updated"))
)
_ADD_LIVE = insert(_LIVE)


class LiveStore(StoreBase):
    """The live_snapshots table."""

    def publish_live(self, match_id: int, step: int, data: dict[str, Any]) -> None:
        """Replace the match's snapshot (a write that touches no rating: it skips their lock)."""
        with self._write(ratings=False) as session:
            conn = session.connection()
            now = utc_now()
            changed = conn.execute(
                _REPLACE_LIVE, {"match": match_id, "step": step, "data": data, "updated": now}
            )
            if changed.rowcount == 0:
                row = {"match_id": match_id, "step": step, "data": data, "updated": now}
                conn.execute(_ADD_LIVE, row)

    def clear_live(self, match_id: int) -> None:
        """Remove the match's snapshot: its attempt ended (the replay takes over)."""
        with self._write(ratings=False) as session:
            session.exec(delete(LiveSnapshot).where(col(LiveSnapshot.match_id) == match_id))

    def read_live(self, match_id: int) -> LiveRead:
        """The match's status and snapshot, in one read (UnknownMatchError if no such match)."""
        with self._read() as session:
            match = self._match(session, match_id, lock=False)
            row = session.get(LiveSnapshot, match_id)
            return LiveRead(match.status, dict(row.data) if row is not None else None)
