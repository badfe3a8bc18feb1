"""The per-match write path in SQLAlchemy Core: start a match, record it, rate its set.

Every match a tournament plays passes through here twice, so the statements are built
once (SQLAlchemy caches their compiled form) and run on the transaction's connection with
plain rows, not ORM objects: the ORM's unit of work, identity map and per-query
construction cost ~4.4 ms of CPU per match, most of a fast tournament's store time
(docs/performance.md). The arithmetic is the same as `RatingStore._recompute`'s, in the same
order, so recompute still equals the live numbers to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, bindparam, exists, insert, or_, select, update
from sqlmodel import SQLModel

from tournaments.models import Match, MatchStatus, TournamentStatus
from tournaments.ratings import Rating, SeatOutcome, TrueSkillSettings, apply_set

UNFINISHED = (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)
_FINISHED = MatchStatus.FINISHED.value

_TABLES = SQLModel.metadata.tables
MATCHES: Table = _TABLES["matches"]
SEATS: Table = _TABLES["seat_results"]
RATINGS: Table = _TABLES["ratings"]
HISTORY: Table = _TABLES["rating_history"]
TOURNAMENTS: Table = _TABLES["tournaments"]
GOALS: Table = _TABLES["tournament_goals"]

_m, _s, _r, _t = MATCHES.c, SEATS.c, RATINGS.c, TOURNAMENTS.c

LOCK_MATCH = select(MATCHES).where(_m.id == bindparam("m_id")).with_for_update()
MARK_RUNNING = (
    update(MATCHES)
    .where(_m.id == bindparam("m_id"))
    .values(status=MatchStatus.RUNNING.value, started=bindparam("now"))
)
TOURNAMENT_RUNNING = (
    update(TOURNAMENTS)
    .where(_t.id == bindparam("t_id"), _t.status == TournamentStatus.PENDING.value)
    .values(status=TournamentStatus.RUNNING.value)
)
MARK_FINISHED = (
    update(MATCHES)
    .where(_m.id == bindparam("m_id"))
    .values(
        status=_FINISHED,
        finished=bindparam("now"),
        result=bindparam("result_json"),
        record=bindparam("record_json"),
    )
)
INSERT_SEATS = insert(SEATS)
# A tournament with an --until-confident goal is finished by its verdict, not by its last
# scheduled match: a kill before the next round must leave it resumable.
TOURNAMENT_FINISHED = (
    update(TOURNAMENTS)
    .where(
        _t.id == bindparam("t_id"),
        _t.status != TournamentStatus.CANCELLED.value,
        ~exists().where(_m.tournament_id == bindparam("t_id"), _m.status.in_(UNFINISHED)),
        ~exists().where(GOALS.c.tournament_id == bindparam("t_id")),
    )
    .values(status=TournamentStatus.FINISHED.value)
)
TOURNAMENT_FACTS = select(TOURNAMENTS).where(_t.id == bindparam("t_id"))
# Two probes of ix_matches_rated (tournament, status, schedule index), not one scan of
# the tournament's finished matches: this runs once per recorded match.
LATER_RATED = select(
    or_(
        exists().where(
            _m.tournament_id == bindparam("t_id"),
            _m.status == _FINISHED,
            _m.schedule_index > bindparam("index"),
        ),
        exists()
        .where(_t.game == bindparam("game"), _t.id > bindparam("t_id"))
        .where(_m.tournament_id == _t.id, _m.status == _FINISHED),
    )
)
LOCK_RATINGS = (
    select(RATINGS)
    .where(_r.game == bindparam("game"), _r.bot_id.in_(bindparam("bots", expanding=True)))
    .with_for_update()
)
SET_MEMBERS = (
    select(_m.id, _m.status)
    .where(
        _m.tournament_id == bindparam("t_id"),
        _m.round == bindparam("round"),
        _m.table_index == bindparam("table"),
        _m.status != MatchStatus.VOIDED.value,
    )
    .order_by(_m.schedule_index)
)
SET_SEATS = (
    select(_s.match_id, _s.bot_id, _s.rank)
    .join(MATCHES, _m.id == _s.match_id)
    .where(_s.match_id.in_(bindparam("ids", expanding=True)))
    .order_by(_m.schedule_index, _s.seat)
)
INSERT_RATINGS = insert(RATINGS)
UPDATE_RATINGS = update(RATINGS).where(
    _r.bot_id == bindparam("b_id"), _r.game == bindparam("b_game")
)
INSERT_HISTORY = insert(HISTORY)


@dataclass(frozen=True)
class TournamentFacts:
    """What recording needs of a tournament and never changes after it is created."""

    id: int
    game: str
    settings: TrueSkillSettings


def tournament_facts(conn: Connection, tournament_id: int) -> TournamentFacts | None:
    """The tournament's game and rating settings, or None if there is no such tournament."""
    row = conn.execute(TOURNAMENT_FACTS, {"t_id": tournament_id}).first()
    if row is None:
        return None
    return TournamentFacts(
        tournament_id,
        row.game,
        TrueSkillSettings(
            mu=row.ts_mu,
            sigma=row.ts_sigma,
            beta=row.ts_beta,
            tau=row.ts_tau,
            draw_probability=row.ts_draw_probability,
        ),
    )


def lock_match(conn: Connection, match_id: int) -> Match | None:
    """The match row, locked for this transaction on PostgreSQL, or None."""
    row = conn.execute(LOCK_MATCH, {"m_id": match_id}).first()
    return None if row is None else Match(**row._mapping)


def mark_running(conn: Connection, match: Match, now: datetime) -> None:
    """Mark a match running; its tournament becomes running if it was pending."""
    conn.execute(MARK_RUNNING, {"m_id": match.id, "now": now})
    conn.execute(TOURNAMENT_RUNNING, {"t_id": match.tournament_id})


def store_result(
    conn: Connection,
    match: Match,
    ranks: Sequence[int],
    outcomes: Sequence[SeatOutcome],
    record: dict[str, Any] | None,
    now: datetime,
) -> list[tuple[int, float, int, bool]]:
    """Write a finished match and its seat rows; returns (bot, score, faults, forfeited) a seat."""
    seats = [
        (bot_id, float(o.score), o.faults, o.forfeited)
        for bot_id, o in zip(match.seats, outcomes, strict=True)
    ]
    conn.execute(
        INSERT_SEATS,
        [
            {
                "match_id": match.id,
                "seat": seat,
                "bot_id": bot_id,
                "score": score,
                "rank": rank,
                "faults": faults,
                "forfeited": forfeited,
            }
            for seat, ((bot_id, score, faults, forfeited), rank) in enumerate(
                zip(seats, ranks, strict=True)
            )
        ],
    )
    match.status = _FINISHED
    match.finished = now
    match.result = {
        "scores": [s[1] for s in seats],
        "ranks": list(ranks),
        "faults": [s[2] for s in seats],
        "forfeited": [s[3] for s in seats],
    }
    match.record = record
    conn.execute(
        MARK_FINISHED,
        {"m_id": match.id, "now": now, "result_json": match.result, "record_json": record},
    )
    return seats


def later_match_rated(conn: Connection, tournament: TournamentFacts, match: Match) -> bool:
    """Whether a match of the game later in rating order is already recorded."""
    params = {"game": tournament.game, "t_id": match.tournament_id, "index": match.schedule_index}
    return bool(conn.execute(LATER_RATED, params).scalar())


def finish_if_done(conn: Connection, tournament_id: int) -> None:
    """Mark the tournament finished when nothing is left to play and no goal extends it."""
    conn.execute(TOURNAMENT_FINISHED, {"t_id": tournament_id})


@dataclass
class _RatingRow:
    """A bot's rating row as read and changed in one transaction."""

    mu: float
    sigma: float
    matches: int
    score_sum: float
    faults: int
    last_tournament: int | None = None  # the latest tournament that rated the bot here
    new: bool = False


def rate_recorded(
    conn: Connection,
    tournament: TournamentFacts,
    match: Match,
    seats: list[tuple[int, float, int, bool]],
) -> None:
    """Count a recorded match in its bots' totals; rate its set when this match completes it."""
    game = tournament.game
    stored = _locked(conn, game, [s[0] for s in seats])
    for bot_id, score, faults, _forfeited in seats:
        row = stored.get(bot_id)
        if row is None:
            initial = tournament.settings.initial()
            row = stored[bot_id] = _RatingRow(initial.mu, initial.sigma, 0, 0.0, 0, new=True)
        row.matches += 1
        row.score_sum += score
        row.faults += faults
    history: list[dict[str, Any]] = []
    members = conn.execute(
        SET_MEMBERS,
        {"t_id": match.tournament_id, "round": match.round, "table": match.table_index},
    ).all()
    if all(m.status == _FINISHED for m in members):
        history = _rate_set(conn, tournament, stored, [m.id for m in members])
    _write_ratings(conn, game, stored)
    if history:
        conn.execute(INSERT_HISTORY, history)


def _rate_set(
    conn: Connection, tournament: TournamentFacts, stored: dict[int, _RatingRow], ids: list[int]
) -> list[dict[str, Any]]:
    game = tournament.game
    by_match: dict[int, tuple[list[int], list[int]]] = {i: ([], []) for i in ids}
    for seat in conn.execute(SET_SEATS, {"ids": ids}):
        bots, ranks = by_match[seat.match_id]
        bots.append(seat.bot_id)
        ranks.append(seat.rank)
    seated = list(dict.fromkeys(b for bots, _ in by_match.values() for b in bots))
    missing = [b for b in seated if b not in stored]
    if missing:
        stored.update(_locked(conn, game, missing))
    changes = apply_set(
        tournament.settings,
        {b: Rating(r.mu, r.sigma) for b, r in stored.items()},
        list(by_match.values()),
        carried={b for b in seated if stored[b].last_tournament not in (None, tournament.id)},
    )
    history = []
    for change in changes:
        row = stored[change.bot_id]
        row.mu, row.sigma = change.after.mu, change.after.sigma
        last = row.last_tournament
        row.last_tournament = tournament.id if last is None else max(last, tournament.id)
        history.append(
            {
                "bot_id": change.bot_id,
                "game": game,
                "match_id": ids[-1],
                "mu_before": change.before.mu,
                "sigma_before": change.before.sigma,
                "mu_after": change.after.mu,
                "sigma_after": change.after.sigma,
            }
        )
    return history


def _locked(conn: Connection, game: str, bot_ids: list[int]) -> dict[int, _RatingRow]:
    return {
        r.bot_id: _RatingRow(r.mu, r.sigma, r.matches, r.score_sum, r.faults, r.last_tournament_id)
        for r in conn.execute(LOCK_RATINGS, {"game": game, "bots": bot_ids})
    }


def _write_ratings(conn: Connection, game: str, stored: dict[int, _RatingRow]) -> None:
    fresh, changed = [], []
    for bot_id, row in stored.items():
        values = {
            "mu": row.mu,
            "sigma": row.sigma,
            "matches": row.matches,
            "score_sum": row.score_sum,
            "faults": row.faults,
            "last_tournament_id": row.last_tournament,
        }
        if row.new:
            fresh.append({"bot_id": bot_id, "game": game, **values})
        else:
            changed.append({"b_id": bot_id, "b_game": game, **values})
    if fresh:
        conn.execute(INSERT_RATINGS, fresh)
    if changed:
        conn.execute(UPDATE_RATINGS, changed)
