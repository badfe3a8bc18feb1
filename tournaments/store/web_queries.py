"""Read-only queries of the web page, each one or two indexed selects of only the columns shown
(a match's record, its whole action list, is loaded only by the replay)."""

from __future__ import annotations

from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from tournaments.errors import UnknownTournamentError
from tournaments.models import (
    Bot,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Tournament,
    TournamentEntrant,
)
from tournaments.store.base import StoreBase
from tournaments.store.queries import TournamentRows


def tournament_rows(store: StoreBase, tournament_id: int) -> TournamentRows:
    """What tournaments.standings.summarise needs of one tournament, without match records."""
    with Session(store.engine) as session:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise UnknownTournamentError(tournament_id)
        entrants = session.exec(
            select(Bot)
            .join(TournamentEntrant, col(TournamentEntrant.bot_id) == col(Bot.id))
            .where(TournamentEntrant.tournament_id == tournament_id)
            .order_by(col(TournamentEntrant.position))
        ).all()
        matches = session.exec(
            select(Match)
            .options(defer(Match.record))  # type: ignore[arg-type]
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
        session.expunge_all()
    return TournamentRows(tournament, list(entrants), list(matches), list(seats), list(history))
