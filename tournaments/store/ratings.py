"""Stored ratings: leaderboards, rating rows and history, live rating and recompute."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, insert, or_
from sqlmodel import Session, col, select

from tournaments.models import (
    Bot,
    BotRating,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Tournament,
)
from tournaments.ratings import Rating, apply_match
from tournaments.store.base import StoreBase


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
    """Ratings: the leaderboard, rating rows, history, per-match updates and recompute."""

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
        changes = apply_match(
            tournament.trueskill, current, bot_ids, [s.rank for s in seats]
        )
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
                seats,
                apply_match(settings, current, bot_ids, [s.rank for s in seats]),
                strict=True,
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
