"""Read-only queries for inspection: one tournament's rows, match search, a bot's profile."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, exists, func, or_, select

from tournaments.models import (
    HOUSE_AUTHOR,
    Author,
    Bot,
    BotRating,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Tournament,
    TournamentEntrant,
)
from tournaments.store.base import StoreBase

UNRECORDED = "unrecorded"  # faults counted on a seat whose match kept no record of their kinds

_BATCH = 200  # candidate matches loaded in full at a time while a search filters them


@dataclass(frozen=True)
class TournamentRows:
    """Everything stored about one tournament that its result is computed from."""

    tournament: Tournament
    entrants: list[Bot]
    matches: list[Match]
    seat_results: list[SeatResult]
    history: list[RatingHistory]


@dataclass(frozen=True)
class MatchSummary:
    """One match found by a search: where it was played, who sat, how it ended, its faults."""

    id: int
    tournament_id: int
    game: str
    status: str
    round: int
    table: int
    rotation: int
    attempt: int
    bot_ids: tuple[int, ...]
    seats: tuple[str, ...]
    scores: tuple[float, ...] | None
    faults: tuple[int, ...]
    fault_kinds: tuple[dict[str, int], ...]
    void_reason: str | None
    finished: datetime | None

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return {
            "id": self.id,
            "tournament": self.tournament_id,
            "game": self.game,
            "status": self.status,
            "round": self.round,
            "table": self.table,
            "rotation": self.rotation,
            "attempt": self.attempt,
            "seats": list(self.seats),
            "scores": None if self.scores is None else list(self.scores),
            "faults": list(self.faults),
            "fault_kinds": [dict(k) for k in self.fault_kinds],
            "void_reason": self.void_reason,
            "finished": None if self.finished is None else self.finished.isoformat(),
        }


@dataclass(frozen=True)
class BotProfile:
    """A bot (retired ones too) with its ratings per game and its faults by kind."""

    bot: Bot
    ratings: list[BotRating]
    faults: dict[str, int]
    tournaments: int
    recent: list[MatchSummary] = field(default_factory=list)
    author: str = HOUSE_AUTHOR  # the name of the bot's author


class QueryStore(StoreBase):
    """Read-only inspection: a tournament's rows, match search and bot profiles."""

    def tournament_rows(self, tournament_id: int) -> TournamentRows:
        """A tournament's entrants, every match row, finished seat rows and rating changes."""
        with self._read() as session:
            tournament = self._tournament(session, tournament_id)
            entrants = session.exec(
                select(Bot)
                .join(TournamentEntrant, col(TournamentEntrant.bot_id) == col(Bot.id))
                .where(TournamentEntrant.tournament_id == tournament_id)
                .order_by(col(TournamentEntrant.position))
            ).all()
            matches = session.exec(
                select(Match)
                .where(Match.tournament_id == tournament_id)
                .order_by(col(Match.schedule_index), col(Match.attempt))
            ).all()
            seats = session.exec(
                select(SeatResult)
                .join(Match, col(Match.id) == col(SeatResult.match_id))
                .where(
                    Match.tournament_id == tournament_id,
                    Match.status == MatchStatus.FINISHED.value,
                )
                .order_by(col(Match.schedule_index), col(SeatResult.seat))
            ).all()
            history = session.exec(
                select(RatingHistory)
                .join(Match, col(Match.id) == col(RatingHistory.match_id))
                .where(Match.tournament_id == tournament_id)
                .order_by(col(Match.schedule_index), col(RatingHistory.id))
            ).all()
        return TournamentRows(tournament, list(entrants), list(matches), list(seats), list(history))

    def find_matches(
        self,
        *,
        tournament_id: int | None = None,
        bot: int | str | None = None,
        game: str | None = None,
        statuses: Sequence[str] = (),
        faults: bool = False,
        fault_kind: str | None = None,
        limit: int = 50,
    ) -> list[MatchSummary]:
        """Matches newest first (by id) that pass every filter given, at most `limit`.

        `statuses` keeps matches in any of them; `faults` keeps matches with a fault and
        `fault_kind` those with a fault of that kind, with `bot` only that bot's faults
        counting. Voided attempts are matches too."""
        with self._read() as session:
            query = (
                select(Match.id, Match.seats)
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .order_by(col(Match.id).desc())
            )
            bot_id: int | None = None
            if tournament_id is not None:
                self._tournament(session, tournament_id)
                query = query.where(Match.tournament_id == tournament_id)
            if bot is not None:
                bot_id = self._bot(session, bot, include_removed=True).id
                query = query.where(
                    col(Match.tournament_id).in_(
                        select(TournamentEntrant.tournament_id).where(
                            TournamentEntrant.bot_id == bot_id
                        )
                    )
                )
            if game is not None:
                query = query.where(Tournament.game == game)
            if statuses:
                query = query.where(col(Match.status).in_(statuses))
            if faults or fault_kind is not None:
                # A finished match's faults are in its seat rows; others are read from records.
                seat_faults = select(SeatResult.id).where(
                    SeatResult.match_id == Match.id, col(SeatResult.faults) > 0
                )
                if bot_id is not None:
                    seat_faults = seat_faults.where(SeatResult.bot_id == bot_id)
                query = query.where(
                    or_(Match.status != MatchStatus.FINISHED.value, exists(seat_faults))
                )
            candidates = [
                match_id
                for match_id, seats in session.exec(query).all()
                if match_id is not None and (bot_id is None or bot_id in seats)
            ]
            found: list[MatchSummary] = []
            for summary in self._summaries(session, candidates):
                wanted = [s for s, b in enumerate(summary.bot_ids) if bot_id in (None, b)]
                if faults and not any(summary.faults[s] for s in wanted):
                    continue
                if fault_kind is not None and not any(
                    summary.fault_kinds[s].get(fault_kind) for s in wanted
                ):
                    continue
                found.append(summary)
                if len(found) >= limit:
                    break
            return found

    def bot_profile(self, key: int | str, *, recent: int = 10) -> BotProfile:
        """A bot, retired or not: its ratings by game, faults by kind, latest played matches."""
        with self._read() as session:
            bot = self._bot(session, key, include_removed=True)
            assert bot.id is not None
            owner = None if bot.author_id is None else session.get(Author, bot.author_id)
            ratings = session.exec(
                select(BotRating).where(BotRating.bot_id == bot.id).order_by(col(BotRating.game))
            ).all()
            entered = session.exec(
                select(func.count())
                .select_from(TournamentEntrant)
                .where(TournamentEntrant.bot_id == bot.id)
            ).one()
            charged = session.exec(
                select(SeatResult.seat, SeatResult.faults, Match.record)
                .join(Match, col(Match.id) == col(SeatResult.match_id))
                .where(
                    SeatResult.bot_id == bot.id,
                    col(SeatResult.faults) > 0,
                    Match.status == MatchStatus.FINISHED.value,
                )
            ).all()
        kinds: Counter[str] = Counter()
        for seat, count, record in charged:
            named = [f["kind"] for f in _record_faults(record) if f.get("seat") == seat]
            kinds.update(named)
            if len(named) < count:
                kinds[UNRECORDED] += count - len(named)
        played = [s.value for s in MatchStatus if s != MatchStatus.PENDING]
        matches = self.find_matches(bot=bot.id, statuses=played, limit=recent) if recent else []
        author = HOUSE_AUTHOR if owner is None else owner.name
        return BotProfile(bot, list(ratings), dict(kinds), int(entered), matches, author)

    def _summaries(self, session: Session, ids: Sequence[int]) -> Iterator[MatchSummary]:
        names: dict[int, str] = {}
        for start in range(0, len(ids), _BATCH):
            chunk = ids[start : start + _BATCH]
            rows = session.exec(
                select(Match, Tournament.game)
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .where(col(Match.id).in_(chunk))
                .order_by(col(Match.id).desc())
            ).all()
            missing = {b for match, _ in rows for b in match.seats} - names.keys()
            if missing:
                names.update(
                    (i, n)
                    for i, n in session.exec(
                        select(Bot.id, Bot.name).where(col(Bot.id).in_(missing))
                    ).all()
                    if i is not None
                )
            for match, game in rows:
                yield _summary(match, game, names)


def _record_faults(record: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    faults = (record or {}).get("faults") or []
    return [f for f in faults if isinstance(f, dict)]


def _summary(match: Match, game: str, names: dict[int, str]) -> MatchSummary:
    assert match.id is not None
    result = match.result or {}
    recorded = _record_faults(match.record)
    per_seat = result.get("faults")
    if not isinstance(per_seat, list) or len(per_seat) != len(match.seats):
        per_seat = [sum(1 for f in recorded if f.get("seat") == s) for s in range(len(match.seats))]
    scores = result.get("scores")
    reason = result.get("void_reason")
    return MatchSummary(
        id=match.id,
        tournament_id=match.tournament_id,
        game=game,
        status=match.status,
        round=match.round,
        table=match.table_index,
        rotation=match.rotation,
        attempt=match.attempt,
        bot_ids=tuple(match.seats),
        seats=tuple(names.get(b, f"#{b}") for b in match.seats),
        scores=tuple(float(s) for s in scores) if isinstance(scores, list) else None,
        faults=tuple(int(n) for n in per_seat),
        fault_kinds=tuple(
            dict(Counter(str(f.get("kind")) for f in recorded if f.get("seat") == s))
            for s in range(len(match.seats))
        ),
        void_reason=None if reason is None else str(reason),
        finished=match.finished,
    )
