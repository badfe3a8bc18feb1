"""Stored tournaments: creation with their entrants and whole schedule, status, progress."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, insert
from sqlmodel import col, func, select

from games.registry import get_game
from tournaments.errors import (
    AuthorDisabledError,
    ResultError,
    ScheduleError,
    TournamentError,
)
from tournaments.models import (
    Author,
    Bot,
    Match,
    MatchStatus,
    Tournament,
    TournamentEntrant,
    TournamentStatus,
)
from tournaments.ratings import TrueSkillSettings
from tournaments.schedule import SEED_LIMIT, gauntlet, round_robin
from tournaments.store.base import StoreBase

FORMATS = ("round_robin", "gauntlet", "ladder")


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

    @property
    def resumable(self) -> bool:
        """Whether `tournament resume` has work here: pending, running or interrupted."""
        done = (TournamentStatus.FINISHED.value, TournamentStatus.CANCELLED.value)
        return self.tournament.status not in done


class TournamentStore(StoreBase):
    """Tournaments: create with schedule, get, list, entrants, status and progress."""

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
        worker: str | None = None,
    ) -> Tournament:
        """Store a tournament of entrants (bot ids or names) and all its matches, pending.

        `format` is "round_robin", "gauntlet" (the first entrant meets the field at every
        table of the others) or "ladder" (no schedule: sets are added one at a time, and
        `rounds` counts them, so it starts at 0). `worker`: the one worker that plays it (its
        remote bots connect there); None, any."""
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
            disabled = dict(
                session.exec(
                    select(Author.id, Author.name).where(
                        col(Author.id).in_({b.author_id for b in bots}), col(Author.disabled)
                    )
                ).all()
            )
            for bot in bots:
                if bot.author_id in disabled:
                    raise AuthorDisabledError(bot.name, disabled[bot.author_id])
            bot_ids = [b.id for b in bots if b.id is not None]
            repeated = sorted({b.name for b in bots if bot_ids.count(b.id or 0) > 1})
            if repeated:
                raise ScheduleError(
                    f"a bot enters once; named more than once: {', '.join(repeated)}"
                )
            if format == "ladder":
                schedule = []
                rounds = 0
            elif format == "gauntlet":
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
                worker=worker,
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
            if not schedule:  # a ladder: its sets come later (an empty insert is no insert)
                return tournament
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

    def pin_tournament(
        self, tournament_id: int, worker: str | None, along: Callable[[Connection], int]
    ) -> tuple[Tournament, int]:
        """Pin a tournament to the worker of this name (None: any worker), with `along` (its
        queued jobs' move) in the same transaction; the tournament and along's count.
        A finished or cancelled tournament has nothing to move: TournamentError."""
        with self._write() as session:
            tournament = self._tournament(session, tournament_id)
            if tournament.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
                raise TournamentError(
                    f"tournament {tournament_id} is {tournament.status}: nothing left to play"
                )
            tournament.worker = worker
            session.add(tournament)
            session.flush()
            moved = along(session.connection())
        return tournament, moved

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
