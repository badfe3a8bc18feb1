"""Stored matches: the runner's life cycle (start, void, record a result) and match reads."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import col, func, select

from tournaments.errors import MatchAlreadyFinishedError, MatchStateError, ResultError
from tournaments.models import (
    Bot,
    Match,
    MatchStatus,
    SeatResult,
    Tournament,
    TournamentGoal,
    TournamentStatus,
    utc_now,
)
from tournaments.ratings import SeatOutcome, placements
from tournaments.store.ratings import RatingStore

UNFINISHED = (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)

LOAD_VOID_PREFIX = "load:"  # a void reason that names the server's load


@dataclass(frozen=True)
class FinishedMatch:
    """A finished match's outcome as the runner hands it to the committer."""

    match_id: int
    outcomes: tuple[SeatOutcome, ...]
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class MatchDetail:
    """A match with its tournament, per-seat results and the names of the seated bots."""

    match: Match
    tournament: Tournament
    seat_results: list[SeatResult]
    bot_names: dict[int, str] = field(default_factory=dict)


class MatchStore(RatingStore):
    """Matches: read them, start, void and record results (which rate them)."""

    def matches(self, tournament_id: int, *, include_voided: bool = True) -> list[Match]:
        """Every match row of a tournament in schedule order (attempts in order)."""
        with self._read() as session:
            self._tournament(session, tournament_id)
            query = (
                select(Match)
                .where(Match.tournament_id == tournament_id)
                .order_by(col(Match.schedule_index), col(Match.attempt))
            )
            if not include_voided:
                query = query.where(Match.status != MatchStatus.VOIDED.value)
            return list(session.exec(query).all())

    def load_voids(self, game: str) -> dict[int, int]:
        """Per tournament of a game, its matches voided for the server's load (replayed)."""
        with self._read() as session:
            rows = session.exec(
                select(Match.tournament_id, Match.result)
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .where(Tournament.game == game, Match.status == MatchStatus.VOIDED.value)
            ).all()
        counts: dict[int, int] = defaultdict(int)
        for tournament_id, result in rows:
            if str((result or {}).get("void_reason", "")).startswith(LOAD_VOID_PREFIX):
                counts[tournament_id] += 1
        return dict(counts)

    def pending_matches(self, tournament_id: int) -> list[Match]:
        """Matches still to play, in schedule order; one left running by a dead process counts."""
        with self._read() as session:
            self._tournament(session, tournament_id)
            return list(
                session.exec(
                    select(Match)
                    .where(Match.tournament_id == tournament_id, col(Match.status).in_(UNFINISHED))
                    .order_by(col(Match.schedule_index))
                ).all()
            )

    def get_match(self, match_id: int) -> Match:
        """The match with this id (its record included), or UnknownMatchError."""
        with self._read() as session:
            return self._match(session, match_id, lock=False)

    def match_detail(self, match_id: int) -> MatchDetail:
        """A match with its tournament, seat results and seated bots' names."""
        with self._read() as session:
            match = self._match(session, match_id, lock=False)
            tournament = self._tournament(session, match.tournament_id)
            seats = session.exec(
                select(SeatResult)
                .where(SeatResult.match_id == match_id)
                .order_by(col(SeatResult.seat))
            ).all()
            names = session.exec(select(Bot.id, Bot.name).where(col(Bot.id).in_(match.seats))).all()
        return MatchDetail(
            match, tournament, list(seats), {i: n for i, n in names if i is not None}
        )

    def start_match(self, match_id: int) -> Match:
        """Mark a pending (or stale running) match running; its tournament becomes running."""
        with self._write() as session:
            match = self._match(session, match_id, lock=True)
            self._check_open(match, "start")
            match.status = MatchStatus.RUNNING.value
            match.started = utc_now()
            session.add(match)
            tournament = self._tournament(session, match.tournament_id)
            if tournament.status == TournamentStatus.PENDING.value:
                tournament.status = TournamentStatus.RUNNING.value
                session.add(tournament)
        return match

    def void_match(
        self, match_id: int, reason: str, *, record: dict[str, Any] | None = None
    ) -> Match:
        """Void a match (server fault: never rated) and schedule it again; returns the new row."""
        with self._write() as session:
            match = self._match(session, match_id, lock=True)
            self._check_open(match, "void")
            match.status = MatchStatus.VOIDED.value
            match.result = {"void_reason": reason}
            match.record = record
            match.finished = utc_now()
            session.add(match)
            again = Match(
                tournament_id=match.tournament_id,
                schedule_index=match.schedule_index,
                attempt=match.attempt + 1,
                round=match.round,
                table_index=match.table_index,
                rotation=match.rotation,
                seed=match.seed,
                seats=list(match.seats),
            )
            session.add(again)
        return again

    def record(self, finished: FinishedMatch) -> Match:
        """record_result for a FinishedMatch (the committer's callback)."""
        return self.record_result(finished.match_id, finished.outcomes, record=finished.record)

    def record_result(
        self,
        match_id: int,
        outcomes: Sequence[SeatOutcome],
        *,
        record: dict[str, Any] | None = None,
    ) -> Match:
        """Store a result, its seat rows and rating updates in one transaction; never twice."""
        # MatchAlreadyFinishedError (nothing written) makes a repeated call harmless. If a
        # later match of the game (by tournament id, schedule index) is already rated, the
        # game is recomputed in this transaction so live numbers always equal recompute().
        outcomes = list(outcomes)
        for outcome in outcomes:
            if not isinstance(outcome, SeatOutcome):
                raise ResultError(f"outcomes must be SeatOutcome values, not {outcome!r}")
        with self._write() as session:
            match = self._match(session, match_id, lock=True)
            self._check_open(match, "record a result for")
            if len(outcomes) != len(match.seats):
                raise ResultError(
                    f"match {match_id} has {len(match.seats)} seats but {len(outcomes)} "
                    "outcomes were given"
                )
            tournament = self._tournament(session, match.tournament_id)
            ranks = placements(outcomes)
            seat_rows = [
                SeatResult(
                    match_id=match_id,
                    seat=seat,
                    bot_id=bot_id,
                    score=float(o.score),
                    rank=rank,
                    faults=o.faults,
                    forfeited=o.forfeited,
                )
                for seat, (bot_id, o, rank) in enumerate(
                    zip(match.seats, outcomes, ranks, strict=True)
                )
            ]
            session.add_all(seat_rows)
            match.status = MatchStatus.FINISHED.value
            match.finished = utc_now()
            match.result = {
                "scores": [float(o.score) for o in outcomes],
                "ranks": list(ranks),
                "faults": [o.faults for o in outcomes],
                "forfeited": [o.forfeited for o in outcomes],
            }
            match.record = record
            session.add(match)
            session.flush()
            if self._later_match_rated(session, tournament, match):
                self._recompute(session, tournament.game)
            else:
                self._rate(session, tournament, match, seat_rows)
            left = session.exec(
                select(func.count())
                .select_from(Match)
                .where(Match.tournament_id == tournament.id, col(Match.status).in_(UNFINISHED))
            ).one()
            # A tournament with an --until-confident goal is finished by its verdict, not by
            # its last scheduled match: a kill before the next round must leave it resumable.
            goal = session.get(TournamentGoal, tournament.id)
            if left == 0 and tournament.status != TournamentStatus.CANCELLED.value and not goal:
                tournament.status = TournamentStatus.FINISHED.value
                session.add(tournament)
        return match

    def seat_results(self, match_id: int) -> list[SeatResult]:
        """The per-seat rows of a finished match, by seat."""
        with self._read() as session:
            return list(
                session.exec(
                    select(SeatResult)
                    .where(SeatResult.match_id == match_id)
                    .order_by(col(SeatResult.seat))
                ).all()
            )

    def _check_open(self, match: Match, action: str) -> None:
        assert match.id is not None
        if match.status == MatchStatus.FINISHED.value:
            raise MatchAlreadyFinishedError(match.id, action)
        if match.status not in UNFINISHED:
            raise MatchStateError(match.id, match.status, action)
