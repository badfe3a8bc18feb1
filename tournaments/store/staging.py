"""Results played by workers on many machines, recorded and rated in schedule order."""

# A worker stages its result and then commits, from the head of the schedule, every staged
# match whose predecessors are all recorded: the ordered committer of one process, kept in
# the database so that it holds across processes. Two workers committing at once race only
# for the same head match, and record_result refuses the second (nothing is written twice).

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete
from sqlmodel import col, select

from tournaments.errors import MatchStateError, UnknownMatchError
from tournaments.models import Match, MatchStatus, StagedResult
from tournaments.ratings import SeatOutcome
from tournaments.store.matches import UNFINISHED, MatchStore


class StagingStore(MatchStore):
    """Staged results of workers and their commit in schedule order."""

    def current_attempt(self, tournament_id: int, schedule_index: int) -> Match:
        """The latest attempt of a scheduled match (a voided one is replaced by the next)."""
        with self._read() as session:
            self._tournament(session, tournament_id)
            match = session.exec(
                select(Match)
                .where(Match.tournament_id == tournament_id)
                .where(Match.schedule_index == schedule_index)
                .order_by(col(Match.attempt).desc())
                .limit(1)
            ).first()
        if match is None:
            raise UnknownMatchError(f"{schedule_index} of tournament {tournament_id}")
        return match

    def is_staged(self, match_id: int) -> bool:
        """True when a worker has staged this match's result."""
        with self._read() as session:
            return session.get(StagedResult, match_id) is not None

    def stage(
        self,
        match_id: int,
        outcomes: Sequence[SeatOutcome],
        record: dict[str, Any] | None = None,
        worker: str = "",
    ) -> bool:
        """Stage a finished match's result; False (nothing stored) when this attempt was
        voided, recorded or staged already, e.g. by another worker after this one stalled."""
        with self._write(ratings=False) as session:
            match = self._match(session, match_id, lock=True)
            if match.status not in UNFINISHED:
                return False
            if session.get(StagedResult, match_id) is not None:
                return False
            session.add(
                StagedResult(
                    match_id=match_id,
                    tournament_id=match.tournament_id,
                    schedule_index=match.schedule_index,
                    outcomes=[[o.score, o.faults, int(o.forfeited)] for o in outcomes],
                    record=record,
                    worker=worker,
                )
            )
        return True

    def commit_staged(self, tournament_id: int) -> int:
        """Record every staged result whose earlier matches are all recorded, in schedule
        order; returns how many this call recorded."""
        recorded = 0
        while True:
            with self._read() as session:
                head = session.exec(
                    select(Match)
                    .where(Match.tournament_id == tournament_id)
                    .where(col(Match.status).in_(UNFINISHED))
                    .order_by(col(Match.schedule_index), col(Match.attempt))
                    .limit(1)
                ).first()
                staged = session.get(StagedResult, head.id) if head is not None else None
            if head is None or staged is None:
                break
            outcomes = [SeatOutcome(s, int(f), bool(x)) for s, f, x in staged.outcomes]
            try:
                self.record_result(staged.match_id, outcomes, record=staged.record)
                recorded += 1
            except MatchStateError:
                pass  # another worker recorded it first: go on from the new head
        if recorded:
            self._drop_recorded(tournament_id)
        return recorded

    def _drop_recorded(self, tournament_id: int) -> None:
        with self._write() as session:
            done = select(Match.id).where(
                Match.tournament_id == tournament_id,
                col(Match.status).in_((MatchStatus.FINISHED.value, MatchStatus.VOIDED.value)),
            )
            session.exec(
                delete(StagedResult).where(
                    col(StagedResult.tournament_id) == tournament_id,
                    col(StagedResult.match_id).in_(done),
                )
            )
