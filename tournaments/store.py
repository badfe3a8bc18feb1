"""Storage operations: bots, tournaments with their schedules, results, ratings and queries."""

# Every write goes through _write: an in-process lock per database, then one transaction
# that starts with BEGIN IMMEDIATE on SQLite and locks the ratings table on PostgreSQL, so
# concurrent writers never read stale ratings (DESIGN §6 measured 12-13 % lost updates with
# read-modify-commit). Nothing is retried: a failed write is rolled back and raised.

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Engine, and_, delete, insert, or_
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, func, select

from games.registry import get_game
from tournaments import db
from tournaments.errors import (
    BotNameError,
    DatabaseUnavailableError,
    MatchAlreadyFinishedError,
    MatchStateError,
    ResultError,
    ScheduleError,
    StorageError,
    UnknownBotError,
    UnknownMatchError,
    UnknownTournamentError,
)
from tournaments.models import (
    Bot,
    BotRating,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Tournament,
    TournamentEntrant,
    TournamentStatus,
    utc_now,
)
from tournaments.ratings import Rating, SeatOutcome, TrueSkillSettings, apply_match, placements
from tournaments.schedule import SEED_LIMIT, gauntlet, round_robin

BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
FORMATS = ("round_robin", "gauntlet")
UNFINISHED = (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)

_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def hash_token(token: str) -> str:
    """The SHA-256 hex digest a bot token is stored as."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


LOAD_VOID_PREFIX = "load:"  # a void reason that names the server's load


@dataclass(frozen=True)
class FinishedMatch:
    """A finished match's outcome as the runner hands it to the committer."""

    match_id: int
    outcomes: tuple[SeatOutcome, ...]
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class RankingRow:
    """One line of a game's leaderboard."""

    rank: int
    bot_id: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    mean_score: float
    faults: int


@dataclass(frozen=True)
class TournamentProgress:
    """A tournament with its match counts by status and how much of it is done."""

    tournament: Tournament
    counts: dict[str, int]
    scheduled: int
    finished: int

    @property
    def progress(self) -> float:
        """The finished share of scheduled matches, 0.0 to 1.0."""
        return self.finished / self.scheduled if self.scheduled else 1.0


@dataclass(frozen=True)
class MatchDetail:
    """A match with its tournament, per-seat results and the names of the seated bots."""

    match: Match
    tournament: Tournament
    seat_results: list[SeatResult]
    bot_names: dict[int, str] = field(default_factory=dict)


class Store:
    """The database of one cardshark installation (SQLite file or PostgreSQL)."""

    def __init__(self, url: str | URL | None = None, *, echo: bool = False) -> None:
        self.engine: Engine = db.make_engine(url, echo=echo)
        self._shown_url = db.safe_url(self.engine.url)
        self._sqlite = db.is_sqlite(self.engine)
        self._write_engine = self.engine.execution_options(**{db.SQLITE_BEGIN: "IMMEDIATE"})
        key = self.engine.url.render_as_string(hide_password=False)
        with _WRITE_LOCKS_GUARD:
            self._write_lock = _WRITE_LOCKS.setdefault(key, threading.Lock())

    @property
    def url(self) -> str:
        """The database URL with any password masked."""
        return self._shown_url

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ---------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[Session]:
        try:
            with Session(self.engine, expire_on_commit=False) as session:
                yield session
        except SQLAlchemyError as exc:
            raise self._storage_error(exc) from exc

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with self._write_lock:
            try:
                with Session(self._write_engine, expire_on_commit=False) as session:
                    if not self._sqlite:
                        # Serialises writers across processes; plain reads are not blocked.
                        session.connection().exec_driver_sql(
                            "LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE"
                        )
                    yield session
                    session.commit()
            except SQLAlchemyError as exc:
                raise self._storage_error(exc) from exc

    def _storage_error(self, exc: SQLAlchemyError) -> StorageError:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        if isinstance(exc, DBAPIError) and (
            exc.connection_invalidated
            or type(exc).__name__ in ("OperationalError", "InterfaceError")
        ):
            return DatabaseUnavailableError(self._shown_url, reason)
        return StorageError(f"database error on {self._shown_url}: {reason}")

    # -- bots -----------------------------------------------------------------------------

    def add_bot(self, name: str, command: str | None = None) -> tuple[Bot, str]:
        """Register a bot; returns it and its plain token, which is never stored or shown again."""
        if not BOT_NAME.fullmatch(name):
            raise BotNameError(
                name,
                "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
            )
        token = secrets.token_urlsafe(32)
        try:
            with self._write() as session:
                existing = session.exec(select(Bot).where(Bot.name == name)).first()
                if existing is not None:
                    taken = "is taken by a removed bot" if existing.removed else "is already taken"
                    raise BotNameError(name, taken)
                bot = Bot(name=name, token_hash=hash_token(token), command=command)
                session.add(bot)
                session.flush()
        except StorageError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise BotNameError(name, "is already taken") from exc
            raise
        return bot, token

    def list_bots(self, *, include_removed: bool = False) -> list[Bot]:
        """Registered bots by name (removed ones only when asked)."""
        with self._read() as session:
            query = select(Bot).order_by(col(Bot.name))
            if not include_removed:
                query = query.where(col(Bot.removed).is_(None))
            return list(session.exec(query).all())

    def get_bot(self, key: int | str, *, include_removed: bool = False) -> Bot:
        """The bot with this id (int) or name (str), or UnknownBotError."""
        with self._read() as session:
            return self._bot(session, key, include_removed=include_removed)

    def remove_bot(self, key: int | str) -> Literal["deleted", "retired"]:
        """Delete a bot that never entered a tournament, else retire it (docs/storage.md)."""
        # Retiring keeps matches, ratings and history intact so other bots' numbers and
        # recompute() do not change; the token stops working and the bot leaves listings.
        with self._write() as session:
            bot = self._bot(session, key, include_removed=False)
            entered = session.exec(
                select(TournamentEntrant.tournament_id).where(TournamentEntrant.bot_id == bot.id)
            ).first()
            played = session.exec(select(SeatResult.id).where(SeatResult.bot_id == bot.id)).first()
            if entered is None and played is None:
                session.delete(bot)
                return "deleted"
            bot.removed = utc_now()
            session.add(bot)
            return "retired"

    def find_bot_by_token(self, token: str) -> Bot | None:
        """The active bot whose token this is, or None."""
        digest = hash_token(token)
        with self._read() as session:
            bot = session.exec(
                select(Bot).where(Bot.token_hash == digest, col(Bot.removed).is_(None))
            ).first()
        if bot is None or not hmac.compare_digest(bot.token_hash, digest):
            return None
        return bot

    def _bot(self, session: Session, key: int | str, *, include_removed: bool) -> Bot:
        query = select(Bot).where(Bot.id == key if isinstance(key, int) else Bot.name == key)
        bot = session.exec(query).first()
        if bot is None or (bot.removed is not None and not include_removed):
            names = session.exec(select(Bot.name).where(col(Bot.removed).is_(None))).all()
            raise UnknownBotError(key, names)
        return bot

    # -- tournaments ----------------------------------------------------------------------

    def create_tournament(
        self,
        game: str,
        entrants: Sequence[int | str],
        *,
        seats: int | None = None,
        options: Mapping[str, object] | None = None,
        rounds: int = 1,
        tables: int | None = None,
        seed: int | None = None,
        clock_ms: int | None = None,
        bank_ms: int = 0,
        trueskill: TrueSkillSettings | None = None,
        name: str | None = None,
        format: str = "round_robin",
    ) -> Tournament:
        """Store a tournament of entrants (bot ids or names) and all its matches, pending.

        `format` is "round_robin", or "gauntlet": the first entrant meets the field at every
        table of the others."""
        # Unknown games, options, bots and impossible schedules all raise before any write.
        if format not in FORMATS:
            raise ScheduleError(f"unknown format {format!r}; formats: {', '.join(FORMATS)}")
        spec = get_game(game).spec
        n = spec.check_seats(seats)
        resolved = spec.resolve(options)
        clock = spec.move_ms if clock_ms is None else clock_ms
        if clock <= 0 or bank_ms < 0:
            raise ResultError(f"clock_ms must be > 0 and bank_ms >= 0 (got {clock}, {bank_ms})")
        settings = trueskill or TrueSkillSettings()
        master_seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        with self._write() as session:
            bots = [self._bot(session, key, include_removed=False) for key in entrants]
            bot_ids = [b.id for b in bots if b.id is not None]
            if format == "gauntlet":
                if tables is not None:
                    raise ScheduleError(
                        "a gauntlet plays every table; --tables is for round robins"
                    )
                schedule = gauntlet(bot_ids, n, seed=master_seed, rounds=rounds)
            else:
                schedule = round_robin(bot_ids, n, seed=master_seed, rounds=rounds, tables=tables)
            tournament = Tournament(
                name=name,
                game=spec.name,
                options=dict(resolved),
                format=format,
                seats=n,
                rounds=rounds,
                tables=tables,
                seed=master_seed,
                clock_ms=clock,
                bank_ms=bank_ms,
                ts_mu=settings.mu,
                ts_sigma=settings.sigma,
                ts_beta=settings.beta,
                ts_tau=settings.tau,
                ts_draw_probability=settings.draw_probability,
            )
            session.add(tournament)
            session.flush()
            tid = tournament.id
            assert tid is not None
            session.add_all(
                TournamentEntrant(tournament_id=tid, position=i, bot_id=b)
                for i, b in enumerate(bot_ids)
            )
            session.flush()
            session.exec(
                insert(Match),
                params=[
                    {
                        "tournament_id": tid,
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
                ],
            )
        return tournament

    def get_tournament(self, tournament_id: int) -> Tournament:
        """The tournament with this id, or UnknownTournamentError."""
        with self._read() as session:
            return self._tournament(session, tournament_id)

    def list_tournaments(self, *, game: str | None = None) -> list[Tournament]:
        """Every tournament (of one game if given), newest first."""
        with self._read() as session:
            query = select(Tournament).order_by(col(Tournament.id).desc())
            if game is not None:
                query = query.where(Tournament.game == game)
            return list(session.exec(query).all())

    def tournament_entrants(self, tournament_id: int) -> list[Bot]:
        """The tournament's entrants in entry order (retired bots included)."""
        with self._read() as session:
            self._tournament(session, tournament_id)
            rows = session.exec(
                select(Bot)
                .join(TournamentEntrant, col(TournamentEntrant.bot_id) == col(Bot.id))
                .where(TournamentEntrant.tournament_id == tournament_id)
                .order_by(col(TournamentEntrant.position))
            ).all()
            return list(rows)

    def set_tournament_status(self, tournament_id: int, status: TournamentStatus) -> Tournament:
        """Set a tournament's status (the runner marks running, finished or cancelled)."""
        value = TournamentStatus(status).value
        with self._write() as session:
            tournament = self._tournament(session, tournament_id)
            tournament.status = value
            session.add(tournament)
        return tournament

    def tournament_status(self, tournament_id: int) -> TournamentProgress:
        """Match counts by status (voided attempts included) and the finished share."""
        with self._read() as session:
            tournament = self._tournament(session, tournament_id)
            rows = session.exec(
                select(Match.status, func.count())
                .where(Match.tournament_id == tournament_id)
                .group_by(col(Match.status))
            ).all()
        counts = {s.value: 0 for s in MatchStatus}
        counts.update({status: int(n) for status, n in rows})
        scheduled = sum(n for s, n in counts.items() if s != MatchStatus.VOIDED.value)
        return TournamentProgress(tournament, counts, scheduled, counts[MatchStatus.FINISHED])

    def _tournament(self, session: Session, tournament_id: int) -> Tournament:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise UnknownTournamentError(tournament_id)
        return tournament

    # -- matches --------------------------------------------------------------------------

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
                self._rate(session, tournament, match_id, seat_rows)
            left = session.exec(
                select(func.count())
                .select_from(Match)
                .where(Match.tournament_id == tournament.id, col(Match.status).in_(UNFINISHED))
            ).one()
            if left == 0 and tournament.status != TournamentStatus.CANCELLED.value:
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

    def _match(self, session: Session, match_id: int, *, lock: bool) -> Match:
        query = select(Match).where(Match.id == match_id)
        if lock:
            query = query.with_for_update()
        match = session.exec(query).first()
        if match is None:
            raise UnknownMatchError(match_id)
        return match

    def _check_open(self, match: Match, action: str) -> None:
        assert match.id is not None
        if match.status == MatchStatus.FINISHED.value:
            raise MatchAlreadyFinishedError(match.id, action)
        if match.status not in UNFINISHED:
            raise MatchStateError(match.id, match.status, action)

    # -- ratings --------------------------------------------------------------------------

    def rankings(self, game: str, *, include_removed: bool = False) -> list[RankingRow]:
        """The game's leaderboard sorted by mu - 3 sigma; equal values share a rank."""
        with self._read() as session:
            query = (
                select(BotRating, Bot.name)
                .join(Bot, col(Bot.id) == col(BotRating.bot_id))
                .where(BotRating.game == game)
            )
            if not include_removed:
                query = query.where(col(Bot.removed).is_(None))
            rows = session.exec(query).all()
        ordered = sorted(rows, key=lambda r: (-r[0].rating.conservative, -r[0].mu, r[1]))
        out: list[RankingRow] = []
        for position, (rating, bot_name) in enumerate(ordered, start=1):
            conservative = rating.rating.conservative
            rank = position
            if out and out[-1].conservative == conservative:
                rank = out[-1].rank
            out.append(
                RankingRow(
                    rank=rank,
                    bot_id=rating.bot_id,
                    bot=bot_name,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    conservative=conservative,
                    matches=rating.matches,
                    mean_score=rating.score_sum / rating.matches if rating.matches else 0.0,
                    faults=rating.faults,
                )
            )
        return out

    def ratings(self, game: str) -> dict[int, BotRating]:
        """Every bot's rating row in a game, by bot id (retired bots included)."""
        with self._read() as session:
            rows = session.exec(select(BotRating).where(BotRating.game == game)).all()
            return {r.bot_id: r for r in rows}

    def rating_history(self, game: str, bot: int | str | None = None) -> list[RatingHistory]:
        """Rating changes in a game (of one bot if given) in rating order."""
        with self._read() as session:
            query = (
                select(RatingHistory)
                .join(Match, col(Match.id) == col(RatingHistory.match_id))
                .where(RatingHistory.game == game)
                .order_by(
                    col(Match.tournament_id), col(Match.schedule_index), col(RatingHistory.id)
                )
            )
            if bot is not None:
                bot_id = self._bot(session, bot, include_removed=True).id
                query = query.where(RatingHistory.bot_id == bot_id)
            return list(session.exec(query).all())

    def recompute(self, game: str) -> int:
        """Rebuild the game's ratings and history from stored matches; returns matches rated."""
        with self._write() as session:
            return self._recompute(session, game)

    def _later_match_rated(self, session: Session, tournament: Tournament, match: Match) -> bool:
        later = session.exec(
            select(Match.id)
            .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
            .where(
                Tournament.game == tournament.game,
                Match.status == MatchStatus.FINISHED.value,
                Match.id != match.id,
                or_(
                    col(Match.tournament_id) > match.tournament_id,
                    and_(
                        col(Match.tournament_id) == match.tournament_id,
                        col(Match.schedule_index) > match.schedule_index,
                    ),
                ),
            )
            .limit(1)
        ).first()
        return later is not None

    def _rate(
        self, session: Session, tournament: Tournament, match_id: int, seats: list[SeatResult]
    ) -> None:
        bot_ids = [s.bot_id for s in seats]
        stored = {
            r.bot_id: r
            for r in session.exec(
                select(BotRating)
                .where(BotRating.game == tournament.game, col(BotRating.bot_id).in_(bot_ids))
                .with_for_update()
            ).all()
        }
        current = {b: r.rating for b, r in stored.items()}
        changes = apply_match(tournament.trueskill, current, bot_ids, [s.rank for s in seats])
        for seat, change in zip(seats, changes, strict=True):
            row = stored.get(seat.bot_id) or BotRating(
                bot_id=seat.bot_id, game=tournament.game, mu=0.0, sigma=0.0
            )
            row.mu, row.sigma = change.after.mu, change.after.sigma
            row.matches += 1
            row.score_sum += seat.score
            row.faults += seat.faults
            session.add(row)
            session.add(
                _history(tournament.game, match_id, change.bot_id, change.before, change.after)
            )

    def _recompute(self, session: Session, game: str) -> int:
        session.flush()
        session.exec(delete(RatingHistory).where(col(RatingHistory.game) == game))
        session.exec(delete(BotRating).where(col(BotRating.game) == game))
        rows = session.exec(
            select(Match.id, Tournament.id, SeatResult)
            .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
            .join(SeatResult, col(SeatResult.match_id) == col(Match.id))
            .where(Tournament.game == game, Match.status == MatchStatus.FINISHED.value)
            .order_by(
                col(Match.tournament_id),
                col(Match.schedule_index),
                col(Match.attempt),
                col(SeatResult.seat),
            )
        ).all()
        by_match: dict[int, list[SeatResult]] = defaultdict(list)
        tournament_of: dict[int, int] = {}
        for match_id, tournament_id, seat in rows:
            assert match_id is not None and tournament_id is not None
            by_match[match_id].append(seat)
            tournament_of[match_id] = tournament_id
        settings_of = {
            t.id: t.trueskill
            for t in session.exec(
                select(Tournament).where(col(Tournament.id).in_(set(tournament_of.values())))
            ).all()
        }
        current: dict[int, Rating] = {}
        totals: dict[int, _Totals] = defaultdict(_Totals)
        history: list[dict[str, Any]] = []
        for match_id, seats in by_match.items():  # insertion order is rating order
            settings = settings_of[tournament_of[match_id]]
            bot_ids = [s.bot_id for s in seats]
            for seat, change in zip(
                seats, apply_match(settings, current, bot_ids, [s.rank for s in seats]), strict=True
            ):
                current[change.bot_id] = change.after
                totals[change.bot_id].add(seat)
                history.append(
                    _history(game, match_id, change.bot_id, change.before, change.after).model_dump(
                        exclude={"id"}
                    )
                )
        if current:
            session.exec(
                insert(BotRating),
                params=[
                    {
                        "bot_id": bot_id,
                        "game": game,
                        "mu": rating.mu,
                        "sigma": rating.sigma,
                        "matches": totals[bot_id].matches,
                        "score_sum": totals[bot_id].score_sum,
                        "faults": totals[bot_id].faults,
                    }
                    for bot_id, rating in current.items()
                ],
            )
            session.exec(insert(RatingHistory), params=history)
        return len(by_match)


@dataclass
class _Totals:
    """A bot's running totals in a recompute, summed in the same order as live updates."""

    matches: int = 0
    score_sum: float = 0.0
    faults: int = 0

    def add(self, seat: SeatResult) -> None:
        """Count one more rated seat."""
        self.matches += 1
        self.score_sum += seat.score
        self.faults += seat.faults


def _history(game: str, match_id: int, bot_id: int, before: Rating, after: Rating) -> RatingHistory:
    return RatingHistory(
        bot_id=bot_id,
        game=game,
        match_id=match_id,
        mu_before=before.mu,
        sigma_before=before.sigma,
        mu_after=after.mu,
        sigma_after=after.sigma,
    )
