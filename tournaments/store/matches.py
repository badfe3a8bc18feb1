"""Stored matches: the runner's life cycle (start, void, record a result) and match reads."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import URL
from sqlmodel import col, select

from tournaments.errors import (
    MatchAlreadyFinishedError,
    MatchStateError,
    ResultError,
    UnknownMatchError,
    UnknownTournamentError,
)
from tournaments.models import (
    Bot,
    Match,
    MatchStatus,
    SeatResult,
    Tournament,
    utc_now,
)
from tournaments.ratings import SeatOutcome, placements
from tournaments.store import recording
from tournaments.store.ratings import RatingStore

UNFINISHED = recording.UNFINISHED

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

    def __init__(self, url: str | URL | None = None, *, echo: bool = False) -> None:
        """Open the store."""
        super().__init__(url, echo=echo)
        self._tournament_facts: dict[int, recording.TournamentFacts] = {}

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
        with self._write(ratings=False) as session:
            conn = session.connection()
            match = self._open_match(conn, match_id, "start")
            now = utc_now()
            recording.mark_running(conn, match, now)
            match.status, match.started = MatchStatus.RUNNING.value, now
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
            conn = session.connection()
            match = self._open_match(conn, match_id, "record a result for")
            if len(outcomes) != len(match.seats):
                raise ResultError(
                    f"match {match_id} has {len(match.seats)} seats but {len(outcomes)} "
                    "outcomes were given"
                )
            tournament = self._facts(conn, match.tournament_id)
            seats = recording.store_result(
                conn, match, placements(outcomes), outcomes, record, utc_now()
            )
            if recording.later_match_rated(conn, tournament, match):
                self._recompute(session, tournament.game)
            else:
                recording.rate_recorded(conn, tournament, match, seats)
            recording.finish_if_done(conn, tournament.id)
        return match

    def _facts(self, conn: Connection, tournament_id: int) -> recording.TournamentFacts:
        # A tournament's game and rating settings never change once it is created.
        facts = self._tournament_facts.get(tournament_id)
        if facts is None:
            facts = recording.tournament_facts(conn, tournament_id)
            if facts is None:
                raise UnknownTournamentError(tournament_id)
            self._tournament_facts[tournament_id] = facts
        return facts

    def _open_match(self, conn: Connection, match_id: int, action: str) -> Match:
        match = recording.lock_match(conn, match_id)
        if match is None:
            raise UnknownMatchError(match_id)
        self._check_open(match, action)
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
