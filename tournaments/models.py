"""SQLModel tables: authors, bots, submissions, tournaments, matches, results, ratings,
live snapshots, ladder errors."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Double, Index, LargeBinary, UniqueConstraint
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

from tournaments.confidence import ConfidenceGoal
from tournaments.ratings import Rating, TrueSkillSettings


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware (SQLite drops zones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Convert to UTC before storing; naive values are taken as UTC already."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Attach UTC to values the driver returns naive."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class MatchStatus(StrEnum):
    """Where a match is in its life."""

    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    VOIDED = "voided"


class TournamentStatus(StrEnum):
    """Where a tournament is in its life."""

    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # stopped by Ctrl-C or SIGTERM; resume plays what is left


class BotArchive(SQLModel, table=True):
    """A managed bot's directory as a gzipped tar, keyed by the SHA-256 of the tar itself
    (the uncompressed stream: the same tree gives the same digest whatever the compressor)."""

    __tablename__ = "bot_archives"

    digest: str = Field(primary_key=True, max_length=64)
    data: bytes = Field(sa_type=LargeBinary)
    size: int = Field(sa_type=BigInteger)  # bytes of the uncompressed tar
    created: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)


HOUSE_AUTHOR = "house"  # the organizer's own bots (bot add); it has no key


class Author(SQLModel, table=True):
    """Someone whose bots play here; the key is kept only as a SHA-256 hex digest, as a bot's
    token is. The house author (HOUSE_AUTHOR) has none: no key authenticates as it."""

    __tablename__ = "authors"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, index=True, max_length=64)
    key_hash: str | None = Field(default=None, unique=True, index=True, max_length=64)
    # A disabled author's key is refused and their bots enter no tournament created after.
    disabled: bool = Field(default=False)
    created: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)


class Bot(SQLModel, table=True):
    """A registered bot; its token is kept only as a SHA-256 hex digest."""

    __tablename__ = "bots"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, index=True, max_length=64)
    token_hash: str = Field(unique=True, index=True, max_length=64)
    command: str | None = Field(default=None)
    # The stored directory the command runs in (bot add --dir), by its digest; None: the
    # command runs where it is (a path that must exist on every machine that plays it).
    code_digest: str | None = Field(
        default=None, foreign_key="bot_archives.digest", index=True, max_length=64
    )
    created: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)
    removed: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Whose bot it is; the store always sets it (bot add: the house author). NULL only in
    # principle: read as the house author's.
    author_id: int | None = Field(default=None, foreign_key="authors.id", index=True)
    # 1, or n + 1 for an author's submission under the name of their version n (which is
    # then retired, renamed NAME@vN: docs/submitting.md).
    version: int = Field(default=1)
    # A version n + 1 starts each game its predecessor was rated in from that mu (with the
    # initial sigma): game -> mu, kept so that a recompute starts it there too.
    prior_mu: dict[str, float] | None = Field(default=None, sa_type=JSON)


class SubmissionState(StrEnum):
    """Where a submitted bot is: received, then built and tested, then accepted or rejected."""

    RECEIVED = "received"
    BUILDING = "building"
    TESTING = "testing"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


SUBMISSION_DONE = (SubmissionState.ACCEPTED, SubmissionState.REJECTED)


class Submission(SQLModel, table=True):
    """A bot's code as its author sent it, and what became of it (docs/submitting.md)."""

    __tablename__ = "submissions"

    id: int | None = Field(default=None, primary_key=True)
    author_id: int = Field(foreign_key="authors.id", index=True)
    name: str = Field(max_length=64)
    games: list[str] = Field(default_factory=list, sa_type=JSON)
    command: str
    build: str | None = Field(default=None)
    # The archive as sent; the one that plays is the same unless a build made another.
    digest: str = Field(foreign_key="bot_archives.digest", max_length=64)
    state: str = Field(default=SubmissionState.RECEIVED.value, max_length=16)
    detail: str = Field(default="")
    # The bot it became, once accepted.
    bot_id: int | None = Field(default=None, foreign_key="bots.id")
    created: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)
    updated: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)


class Tournament(SQLModel, table=True):
    """A game, its options, format, clocks, TrueSkill settings and status."""

    __tablename__ = "tournaments"

    id: int | None = Field(default=None, primary_key=True)
    name: str | None = Field(default=None)
    game: str = Field(index=True)
    options: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    format: str = Field(default="round_robin")
    seats: int
    rounds: int = Field(default=1)
    tables: int | None = Field(default=None)
    seed: int = Field(sa_type=BigInteger)
    clock_ms: int
    bank_ms: int = Field(default=0)
    ts_mu: float = Field(sa_type=Double)
    ts_sigma: float = Field(sa_type=Double)
    ts_beta: float = Field(sa_type=Double)
    ts_tau: float = Field(sa_type=Double)
    ts_draw_probability: float = Field(sa_type=Double)
    status: str = Field(default=TournamentStatus.PENDING.value, index=True)
    created: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)
    # The worker whose own queue plays it (tournament create --worker, for remote bots that
    # connect to that worker); None: any worker, from the shared queue.
    worker: str | None = Field(default=None)

    @property
    def trueskill(self) -> TrueSkillSettings:
        """The TrueSkill settings this tournament is rated with."""
        return TrueSkillSettings(
            mu=self.ts_mu,
            sigma=self.ts_sigma,
            beta=self.ts_beta,
            tau=self.ts_tau,
            draw_probability=self.ts_draw_probability,
        )


class TournamentGoal(SQLModel, table=True):
    """A tournament that adds rounds until its standings are separated at `confidence`.

    A table of its own rather than columns of `tournaments`: create_all adds a new table to
    an existing database but never a column, so older databases need no migration."""

    __tablename__ = "tournament_goals"

    tournament_id: int = Field(foreign_key="tournaments.id", primary_key=True)
    confidence: float = Field(sa_type=Double)
    max_rounds: int

    @property
    def goal(self) -> ConfidenceGoal:
        """The goal as a value object."""
        return ConfidenceGoal(self.confidence, self.max_rounds)


class LadderError(SQLModel, table=True):
    """An error a ladder run met (a set it could not play, a bot it left out, a scheduler
    that stopped), kept with its time so that `ladder status` shows the last one."""

    __tablename__ = "ladder_errors"

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    at: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)
    message: str


class TournamentEntrant(SQLModel, table=True):
    """A bot entered in a tournament, at its position in the entrant list."""

    __tablename__ = "tournament_entrants"

    tournament_id: int = Field(foreign_key="tournaments.id", primary_key=True)
    position: int = Field(primary_key=True)
    bot_id: int = Field(foreign_key="bots.id", index=True)


class Match(SQLModel, table=True):
    """One scheduled match; a voided match keeps its row and a new attempt is scheduled."""

    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("tournament_id", "schedule_index", "attempt"),
        # Recording a match probes it for a later recorded match (tournaments/store/recording.py).
        Index("ix_matches_rated", "tournament_id", "status", "schedule_index"),
        # Every recorded match looks up its set (rotation of one table in one round).
        Index("ix_matches_set", "tournament_id", "round", "table_index"),
    )

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    schedule_index: int
    attempt: int = Field(default=0)
    round: int
    table_index: int
    rotation: int
    seed: int = Field(sa_type=BigInteger)
    seats: list[int] = Field(sa_type=JSON)
    status: str = Field(default=MatchStatus.PENDING.value)
    result: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    record: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    started: datetime | None = Field(default=None, sa_type=UTCDateTime)
    finished: datetime | None = Field(default=None, sa_type=UTCDateTime)


class SeatResult(SQLModel, table=True):
    """How one seat of a finished match ended, with the rank used for rating."""

    __tablename__ = "seat_results"
    __table_args__ = (UniqueConstraint("match_id", "seat"),)

    id: int | None = Field(default=None, primary_key=True)
    match_id: int = Field(foreign_key="matches.id", index=True)
    seat: int
    bot_id: int = Field(foreign_key="bots.id", index=True)
    score: float = Field(sa_type=Double)
    rank: int
    faults: int = Field(default=0)
    forfeited: bool = Field(default=False)


class BotRating(SQLModel, table=True):
    """A bot's current TrueSkill rating and totals in one game."""

    __tablename__ = "ratings"

    bot_id: int = Field(foreign_key="bots.id", primary_key=True)
    game: str = Field(primary_key=True)
    mu: float = Field(sa_type=Double)
    sigma: float = Field(sa_type=Double)
    matches: int = Field(default=0)
    score_sum: float = Field(default=0.0, sa_type=Double)
    faults: int = Field(default=0)
    # The latest tournament whose set rated the bot in this game (None before any did): a bot
    # rated next in another tournament has its sigma widened first. Kept here, it is read with
    # the rating instead of from the bot's whole history at every set.
    last_tournament_id: int | None = Field(default=None)

    @property
    def rating(self) -> Rating:
        """The rating as a value object."""
        return Rating(self.mu, self.sigma)


class RatingHistory(SQLModel, table=True):
    """One rating change: a bot's mu and sigma before and after a rated match."""

    __tablename__ = "rating_history"
    __table_args__ = (
        UniqueConstraint("match_id", "bot_id"),
        Index("ix_rating_history_game_bot", "game", "bot_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    bot_id: int = Field(foreign_key="bots.id")
    game: str
    match_id: int = Field(foreign_key="matches.id", index=True)
    mu_before: float = Field(sa_type=Double)
    sigma_before: float = Field(sa_type=Double)
    mu_after: float = Field(sa_type=Double)
    sigma_after: float = Field(sa_type=Double)


class StagedResult(SQLModel, table=True):
    """A match a worker finished, waiting until every earlier match is recorded (then it is
    recorded and rated, and this row deleted): ratings follow the schedule, not the finish."""

    __tablename__ = "staged_results"

    match_id: int = Field(foreign_key="matches.id", primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    schedule_index: int
    outcomes: list[list[float]] = Field(sa_type=JSON)  # per seat: score, faults, forfeited
    record: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    worker: str = Field(default="")
    staged: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)


class LiveSnapshot(SQLModel, table=True):
    """The latest public snapshot of a match in play, written by the process that plays it
    (a few times a second at most) so that a web page in any process can follow the match;
    removed when the attempt ends (a final match's row, left by a killed player, is never
    shown). What it holds is only what every seat knows, at least a decision behind the table
    (server/views/spectator.py)."""

    __tablename__ = "live_snapshots"

    match_id: int = Field(foreign_key="matches.id", primary_key=True)
    step: int  # the decisions the snapshot has applied
    data: dict[str, Any] = Field(sa_type=JSON)
    updated: datetime = Field(default_factory=utc_now, sa_type=UTCDateTime)
