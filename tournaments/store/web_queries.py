"""Read-only queries of the web page, each one or two indexed selects of only the columns shown
(a match's record, its whole action list, is loaded only by the replay)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import select as sa_select
from sqlalchemy.orm import defer
from sqlmodel import Session, col, func, select

from tournaments.errors import UnknownTournamentError
from tournaments.models import (
    HOUSE_AUTHOR,
    Author,
    Bot,
    Match,
    MatchStatus,
    RatingHistory,
    SeatResult,
    Submission,
    SubmissionState,
    Tournament,
    TournamentEntrant,
)
from tournaments.store.base import StoreBase
from tournaments.store.queries import TournamentRows
from tournaments.store.tournaments import TournamentProgress

UNPLAYED = (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)
# A match row's record (kilobytes of actions) and the columns stored after it: SQLite reads
# a column behind a long value through its overflow pages, ten times the cost of the rest.
BEHIND_RECORD = ("record", "started", "finished")
# A replaced version keeps its name with @vN (tournaments.store.submissions.version_name).
REPLACED = re.compile(r"@v[0-9]+")
BUILT = "built in "  # an accepted verdict's first line when a build ran: its time, no verdict
VERDICT_SHOWN = 200  # characters of a verdict line shown


def tournament_rows(store: StoreBase, tournament_id: int) -> TournamentRows:
    """What tournaments.standings.summarise needs of one tournament, without match records.

    Matches, seat results and rating changes come back as SQLAlchemy rows, which have every
    attribute summarise and the page read under the model's names, at a tenth of the cost of
    ORM instances (a 10,000-match tournament loads in well under a second)."""
    m, seat, h = Match.__table__.c, SeatResult.__table__.c, RatingHistory.__table__.c  # type: ignore[attr-defined]
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
        conn = session.connection()
        matches = conn.execute(
            sa_select(*(c for c in m if c.name not in BEHIND_RECORD))
            .where(m.tournament_id == tournament_id)
            .order_by(m.schedule_index, m.attempt)
        ).all()
        finished = m.status == MatchStatus.FINISHED.value
        seats = conn.execute(
            sa_select(seat)
            .join(Match.__table__, m.id == seat.match_id)  # type: ignore[attr-defined]
            .where(m.tournament_id == tournament_id, finished)
            .order_by(m.schedule_index, seat.seat)
        ).all()
        history = conn.execute(
            sa_select(h)
            .join(Match.__table__, m.id == h.match_id)  # type: ignore[attr-defined]
            .where(m.tournament_id == tournament_id)
            .order_by(m.schedule_index, h.id)
        ).all()
        session.expunge_all()
    return TournamentRows(
        tournament,
        list(entrants),
        cast(list[Match], matches),
        cast(list[SeatResult], seats),
        cast(list[RatingHistory], history),
    )


def tournament_fingerprint(store: StoreBase, tournament_id: int) -> tuple[object, ...]:
    """What changes whenever the tournament page would: its status and match counts by status
    (one indexed lookup)."""
    with Session(store.engine) as session:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise UnknownTournamentError(tournament_id)
        counts = session.exec(
            select(Match.status, func.count())
            .where(Match.tournament_id == tournament_id)
            .group_by(col(Match.status))
        ).all()
    return (tournament.status, tournament.name, *sorted(counts))


@dataclass(frozen=True)
class RecentMatch:
    """One finished match of a bot: where it sat, who sat, the scores and its own outcome."""

    match_id: int
    tournament_id: int
    game: str
    seat: int
    bots: list[str]
    scores: list[float]
    rank: int
    faults: int
    forfeited: bool


def bot_history(store: StoreBase, bot_id: int, game: str) -> list[RatingHistory]:
    """A bot's rating changes in one game in the order they were applied."""
    with Session(store.engine) as session:
        rows = session.exec(
            select(RatingHistory)
            .join(Match, col(Match.id) == col(RatingHistory.match_id))
            .where(RatingHistory.game == game, RatingHistory.bot_id == bot_id)
            .order_by(col(Match.tournament_id), col(Match.schedule_index), col(RatingHistory.id))
        ).all()
        session.expunge_all()
    return list(rows)


def recent_matches(store: StoreBase, bot_id: int, limit: int) -> list[RecentMatch]:
    """A bot's latest finished matches, newest first."""
    with Session(store.engine) as session:
        rows = session.exec(
            select(SeatResult, Match, Tournament.game)
            .options(defer(Match.record))  # type: ignore[arg-type]
            .join(Match, col(Match.id) == col(SeatResult.match_id))
            .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
            .where(SeatResult.bot_id == bot_id)
            .order_by(col(SeatResult.match_id).desc())
            .limit(limit)
        ).all()
        ids = {b for _, match, _ in rows for b in match.seats}
        names = dict(session.exec(select(Bot.id, Bot.name).where(col(Bot.id).in_(ids))).all())
        session.expunge_all()
    return [
        RecentMatch(
            match_id=seat.match_id,
            tournament_id=match.tournament_id,
            game=game,
            seat=seat.seat,
            bots=[names.get(b, f"#{b}") for b in match.seats],
            scores=list((match.result or {}).get("scores") or []),
            rank=seat.rank,
            faults=seat.faults,
            forfeited=seat.forfeited,
        )
        for seat, match, game in rows
    ]


def pulse(store: StoreBase) -> tuple[tuple[str, int], ...]:
    """A cheap fingerprint of everything the live pages show: match and tournament counts by
    status (a finished match or a tournament's new status changes it)."""
    with Session(store.engine) as session:
        matches = session.exec(select(Match.status, func.count()).group_by(col(Match.status))).all()
        tournaments = session.exec(
            select(Tournament.status, func.count()).group_by(col(Tournament.status))
        ).all()
    return tuple(sorted((f"match:{s}", int(n)) for s, n in matches)) + tuple(
        sorted((f"tournament:{s}", int(n)) for s, n in tournaments)
    )


def latest_tournaments(store: StoreBase, limit: int) -> list[TournamentProgress]:
    """The newest tournaments with their match counts by status, in two queries."""
    with Session(store.engine) as session:
        tournaments = session.exec(
            select(Tournament).order_by(col(Tournament.id).desc()).limit(limit)
        ).all()
        ids = [t.id for t in tournaments]
        rows = session.exec(
            select(Match.tournament_id, Match.status, func.count())
            .where(col(Match.tournament_id).in_(ids))
            .group_by(col(Match.tournament_id), col(Match.status))
        ).all()
        session.expunge_all()
    counts: dict[int, dict[str, int]] = {t: {s.value: 0 for s in MatchStatus} for t in ids if t}
    for tid, status, n in rows:
        counts[tid][status] = int(n)
    out = []
    for t in tournaments:
        c = counts.get(t.id or 0, {})
        scheduled = sum(n for s, n in c.items() if s != MatchStatus.VOIDED.value)
        out.append(TournamentProgress(t, c, scheduled, c.get(MatchStatus.FINISHED.value, 0)))
    return out


@dataclass(frozen=True)
class Entrants:
    """A tournament's number of entrants and its first few, as (name, version) in order."""

    count: int
    first: list[tuple[str, int]]


def tournament_entrants(store: StoreBase, ids: Iterable[int], first: int) -> dict[int, Entrants]:
    """The entrants of each tournament: how many, and the first `first` by position (their
    bots' names and versions), in two queries whatever the field's size."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    with Session(store.engine) as session:
        counts = session.exec(
            select(TournamentEntrant.tournament_id, func.count())
            .where(col(TournamentEntrant.tournament_id).in_(wanted))
            .group_by(col(TournamentEntrant.tournament_id))
        ).all()
        rows = session.exec(
            select(TournamentEntrant.tournament_id, Bot.name, Bot.version)
            .join(Bot, col(Bot.id) == col(TournamentEntrant.bot_id))
            .where(
                col(TournamentEntrant.tournament_id).in_(wanted),
                col(TournamentEntrant.position) < first,
            )
            .order_by(col(TournamentEntrant.tournament_id), col(TournamentEntrant.position))
        ).all()
    out = {tid: Entrants(int(n), []) for tid, n in counts}
    for tid, name, version in rows:
        out[tid].first.append((name, version))
    return out


def deal_in_play(store: StoreBase, match_id: int, *, others: bool = False) -> bool:
    """Whether a match's deal is still to be played: it, or another rotation of its set (same
    tournament, round and table: the same seed), is pending or running; with `others`, only
    another rotation counts."""
    with Session(store.engine) as session:
        match = session.get(Match, match_id)
        if match is None:
            return False
        open_ = session.exec(
            select(func.count())
            .select_from(Match)
            .where(
                Match.tournament_id == match.tournament_id,
                Match.round == match.round,
                Match.table_index == match.table_index,
                col(Match.status).in_(UNPLAYED),
                *([col(Match.id) != match_id] if others else []),
            )
        ).one()
    return bool(open_)


def base_name(name: str) -> str:
    """A bot's name without the @vN a replaced version of it keeps."""
    head, at, tail = name.partition("@")
    return head if at and REPLACED.fullmatch(at + tail) else name


@dataclass(frozen=True)
class BotTag:
    """What a leaderboard shows beside a bot's name: its version and its author's name."""

    version: int
    author: str


def bot_tags(store: StoreBase, bot_ids: Iterable[int]) -> dict[int, BotTag]:
    """The version and author of each bot (a bot with no author is the house's), in one query."""
    ids = sorted(set(bot_ids))
    if not ids:
        return {}
    with Session(store.engine) as session:
        rows = session.exec(
            select(Bot.id, Bot.version, Author.name)
            .outerjoin(Author, col(Author.id) == col(Bot.author_id))
            .where(col(Bot.id).in_(ids))
        ).all()
    return {i: BotTag(v, a or HOUSE_AUTHOR) for i, v, a in rows if i is not None}


@dataclass(frozen=True)
class BotVersion:
    """One version of a bot: its row's name, when it was accepted, the first line of its
    verdict ("" for a bot that was never submitted) and whether it is retired."""

    bot_id: int
    name: str
    version: int
    accepted: datetime
    verdict: str
    retired: bool


def verdict_line(detail: str) -> str:
    """The first line of an accepted submission's verdict (after a build's timing line)."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith(BUILT):
        lines = lines[1:]
    return lines[0][:VERDICT_SHOWN] if lines else ""


def bot_versions(store: StoreBase, bot: Bot) -> list[BotVersion]:
    """Every version of a bot's name by its author (the row of that name and its NAME@vN
    predecessors), newest first, with the accepted submission each came from. Only an
    accepted submission's verdict is read: a rejected one's detail may hold the author's logs."""
    base = base_name(bot.name)
    owner = (
        col(Bot.author_id).is_(None) if bot.author_id is None else Bot.author_id == bot.author_id
    )
    with Session(store.engine) as session:
        rows = [
            b
            for b in session.exec(
                select(Bot).where(
                    owner,
                    (col(Bot.name) == base)
                    | col(Bot.name).startswith(f"{base}@v", autoescape=True),
                )
            ).all()
            if b.id is not None and base_name(b.name) == base
        ]
        accepted = session.exec(
            select(Submission.bot_id, Submission.updated, Submission.detail).where(
                col(Submission.bot_id).in_([b.id for b in rows]),
                Submission.state == SubmissionState.ACCEPTED.value,
            )
        ).all()
        session.expunge_all()
    verdicts = {b: (when, detail) for b, when, detail in accepted}
    versions = [
        BotVersion(
            bot_id=b.id or 0,
            name=b.name,
            version=b.version,
            accepted=verdicts[b.id][0] if b.id in verdicts else b.created,
            verdict=verdict_line(verdicts[b.id][1]) if b.id in verdicts else "",
            retired=b.removed is not None,
        )
        for b in rows
    ]
    return sorted(versions, key=lambda v: (-v.version, -v.bot_id))
