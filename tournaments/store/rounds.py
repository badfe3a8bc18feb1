"""Tournaments that grow: a goal of confidence, and whole rounds appended to a schedule.

Round k appended here is the round k that `create_tournament` would have stored with one
more round: the schedule is rebuilt from the master seed with rounds k + 1 and its last
round kept, so its tables, rotations, seeds and schedule indices are those of a longer
tournament created at once.
"""

from __future__ import annotations

from sqlalchemy import insert
from sqlmodel import col, select

from tournaments.confidence import ConfidenceGoal
from tournaments.errors import ScheduleError
from tournaments.models import (
    Match,
    MatchStatus,
    TournamentEntrant,
    TournamentGoal,
    TournamentStatus,
)
from tournaments.schedule import ScheduledMatch, gauntlet, round_robin
from tournaments.store.base import StoreBase


class RoundStore(StoreBase):
    """A tournament's confidence goal, and rounds appended to its schedule."""

    def set_goal(self, tournament_id: int, goal: ConfidenceGoal) -> None:
        """Store (or replace) the tournament's goal; max_rounds may not be below its rounds."""
        with self._write() as session:
            tournament = self._tournament(session, tournament_id)
            if goal.max_rounds < tournament.rounds:
                raise ScheduleError(
                    f"max rounds {goal.max_rounds} is below the {tournament.rounds} "
                    "rounds already scheduled"
                )
            row = session.get(TournamentGoal, tournament_id) or TournamentGoal(
                tournament_id=tournament_id, confidence=goal.confidence, max_rounds=0
            )
            row.confidence = goal.confidence
            row.max_rounds = goal.max_rounds
            session.add(row)

    def goal(self, tournament_id: int) -> ConfidenceGoal | None:
        """The tournament's goal, None for a tournament of fixed rounds."""
        with self._read() as session:
            self._tournament(session, tournament_id)
            row = session.get(TournamentGoal, tournament_id)
            return None if row is None else row.goal

    def add_round(self, tournament_id: int) -> int:
        """Append the next round of the schedule, pending; returns its number (0-based).

        A finished tournament becomes running again."""
        with self._write() as session:
            tournament = self._tournament(session, tournament_id)
            bot_ids = list(
                session.exec(
                    select(TournamentEntrant.bot_id)
                    .where(TournamentEntrant.tournament_id == tournament_id)
                    .order_by(col(TournamentEntrant.position))
                ).all()
            )
            new = tournament.rounds
            schedule = _schedule(
                tournament.format,
                bot_ids,
                tournament.seats,
                tournament.seed,
                new + 1,
                tournament.tables,
            )
            session.exec(
                insert(Match),
                params=[
                    {
                        "tournament_id": tournament_id,
                        "schedule_index": m.index,
                        "attempt": 0,
                        "round": m.round,
                        "table_index": m.table,
                        "rotation": m.rotation,
                        "seed": m.seed,
                        "seats": list(m.seats),
                        "status": MatchStatus.PENDING.value,
                    }
                    for m in schedule
                    if m.round == new
                ],
            )
            tournament.rounds = new + 1
            if tournament.status == TournamentStatus.FINISHED.value:
                tournament.status = TournamentStatus.RUNNING.value
            session.add(tournament)
        return new


def _schedule(
    format: str, bot_ids: list[int], seats: int, seed: int, rounds: int, tables: int | None
) -> list[ScheduledMatch]:
    """The whole schedule create_tournament stores for these settings."""
    if format == "gauntlet":
        return gauntlet(bot_ids, seats, seed=seed, rounds=rounds)
    return round_robin(bot_ids, seats, seed=seed, rounds=rounds, tables=tables)
