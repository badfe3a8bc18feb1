"""Stored ratings: leaderboards, rating rows and history, per-set rating, recompute, upgrade."""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.engine import URL
from sqlmodel import Field, Session, SQLModel, col, select

from tournaments.models import (
    Bot,
    BotRating,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Tournament,
)
from tournaments.ratings import (
    RATING_METHOD,
    RATING_METHOD_NAME,
    Rating,
    apply_set,
    prior_rating,
)
from tournaments.store.base import StoreBase

_UNFINISHED = (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)


class RatingMethodRow(SQLModel, table=True):
    """Which rating method the stored ratings were computed with (one row)."""

    __tablename__ = "rating_method"

    id: int = Field(default=1, primary_key=True)
    version: int


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


class RatingStore(StoreBase):
    """Ratings: the leaderboard, rating rows, history, per-set updates and recompute."""

    def __init__(self, url: str | URL | None = None, *, echo: bool = False) -> None:
        """Open the store; ratings stored by an older rating method are recomputed once."""
        super().__init__(url, echo=echo)
        self._upgrade_ratings()

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
        """Rebuild the game's ratings and history from stored matches; returns matches counted."""
        with self._write() as session:
            return self._recompute(session, game)

    def _upgrade_ratings(self) -> None:
        """Recompute every game once when the stored ratings were made by another method."""
        with self._read() as session:
            stored = session.get(RatingMethodRow, 1)
        if stored is not None and stored.version == RATING_METHOD:
            return
        with self._write() as session:
            row = session.get(RatingMethodRow, 1)
            if row is not None and row.version == RATING_METHOD:
                return  # another process upgraded it first
            games = sorted(
                set(session.exec(select(BotRating.game).distinct()).all())
                | set(
                    session.exec(
                        select(Tournament.game)
                        .join(Match, col(Match.tournament_id) == col(Tournament.id))
                        .where(Match.status == MatchStatus.FINISHED.value)
                        .distinct()
                    ).all()
                )
            )
            for game in games:
                self._recompute(session, game)
            row = row or RatingMethodRow(id=1, version=RATING_METHOD)
            row.version = RATING_METHOD
            session.add(row)
        if games:
            print(
                f"cardshark: ratings of {', '.join(games)} recomputed once by the "
                f"{RATING_METHOD_NAME} rating of record (method {RATING_METHOD})",
                file=sys.stderr,
            )

    def _recompute(self, session: Session, game: str) -> int:
        session.flush()
        session.exec(delete(RatingHistory).where(col(RatingHistory.game) == game))
        session.exec(delete(BotRating).where(col(BotRating.game) == game))
        rows = session.exec(
            select(Match, SeatResult)
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
        open_sets = set(
            session.exec(
                select(Match.tournament_id, Match.round, Match.table_index)
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .where(Tournament.game == game, col(Match.status).in_(_UNFINISHED))
            ).all()
        )
        by_match: dict[int, list[SeatResult]] = defaultdict(list)
        set_of: dict[int, tuple[int, int, int]] = {}
        for match, seat in rows:
            assert match.id is not None
            by_match[match.id].append(seat)
            set_of[match.id] = (match.tournament_id, match.round, match.table_index)
        settings_of = {
            t.id: t.trueskill
            for t in session.exec(
                select(Tournament).where(col(Tournament.id).in_({k[0] for k in set_of.values()}))
            ).all()
        }
        # New versions of bots start from their predecessor's mu (SubmissionStore).
        current: dict[int, Rating] = {
            bot.id: prior_rating(bot.prior_mu[game])
            for bot in session.exec(select(Bot).where(col(Bot.prior_mu).is_not(None))).all()
            if bot.id is not None and bot.prior_mu and game in bot.prior_mu
        }
        totals: dict[int, _Totals] = defaultdict(_Totals)
        sets: dict[tuple[int, int, int], list[int]] = {}
        for match_id, seats in by_match.items():  # insertion order is schedule order
            key = set_of[match_id]
            for seat in seats:
                current.setdefault(seat.bot_id, settings_of[key[0]].initial())
                totals[seat.bot_id].add(seat)
            sets.setdefault(key, []).append(match_id)
        last_tournament: dict[int, int] = {}
        history: list[dict[str, Any]] = []
        # A set is rated when its last match is recorded: in the order of its last match.
        position = {match_id: n for n, match_id in enumerate(by_match)}
        complete = [(members[-1], key, members) for key, members in sets.items()]
        for last_id, key, members in sorted(complete, key=lambda c: position[c[0]]):
            if key in open_sets:
                continue
            matches = [_seated(by_match[m]) for m in members]
            seated = {b for bots, _ in matches for b in bots}
            for change in apply_set(
                settings_of[key[0]],
                current,
                matches,
                carried={b for b in seated if last_tournament.get(b, key[0]) != key[0]},
            ):
                current[change.bot_id] = change.after
                last_tournament[change.bot_id] = key[0]
                history.append(
                    _history(game, last_id, change.bot_id, change.before, change.after).model_dump(
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
                        "last_tournament_id": last_tournament.get(bot_id),
                    }
                    for bot_id, rating in current.items()
                ],
            )
        if history:
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


def _seated(seats: list[SeatResult]) -> tuple[list[int], list[int]]:
    return [s.bot_id for s in seats], [s.rank for s in seats]


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
