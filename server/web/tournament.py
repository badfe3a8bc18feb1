"""The tournament page's data: standings and cross-table (tournaments.standings), the match list
with its filters, and each seat's score, faults and forfeit on the bot that made them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from server.views.rankings import ranking_cells
from server.web.bot import tagged
from tournaments.models import Match, MatchStatus
from tournaments.standings import Estimate, TournamentResult, summarise
from tournaments.store import RankingRow, TournamentRows, web_queries
from tournaments.store.base import StoreBase
from tournaments.store.web_queries import BotTag

LISTED = 300  # matches shown at once; the filters narrow the rest down
CROSS_SHOWN = 24  # bots of the cross-table shown unless all are asked for (?cross=all)


@dataclass(frozen=True)
class SeatCell:
    """One seat of a listed match: its bot, score, faults and whether it forfeited."""

    seat: int
    bot: str
    score: float | None
    faults: int
    forfeited: bool


@dataclass(frozen=True)
class MatchRow:
    """One listed match."""

    match: Match
    seats: list[SeatCell]


@dataclass(frozen=True)
class MatchFilter:
    """The match list's filters, read from the page's query string."""

    bot: str = ""
    status: str = ""
    faults: bool = False
    forfeits: bool = False

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> MatchFilter:
        """The filters in a query string; unknown statuses filter nothing."""
        status = query.get("status", "")
        return cls(
            bot=query.get("bot", ""),
            status=status if status in {s.value for s in MatchStatus} else "",
            faults=query.get("faults", "") == "1",
            forfeits=query.get("forfeits", "") == "1",
        )

    def keep(self, row: MatchRow) -> bool:
        """Whether a match passes every filter (faults and forfeits of the chosen bot only)."""
        if self.status and row.match.status != self.status:
            return False
        seats = [c for c in row.seats if self.bot in ("", c.bot)]
        if not seats:
            return False
        if self.faults and not any(c.faults for c in seats):
            return False
        return not self.forfeits or any(c.forfeited for c in seats)


def _at(values: object, index: int) -> Any:
    if isinstance(values, list) and index < len(values):
        return values[index]
    return None


def match_rows(matches: list[Match], names: Mapping[int, str]) -> list[MatchRow]:
    """Every match with its seats, newest schedule position first."""
    rows = []
    for match in reversed(matches):
        result = match.result or {}
        cells = [
            SeatCell(
                seat=s,
                bot=names.get(b, f"#{b}"),
                score=_at(result.get("scores"), s),
                faults=int(_at(result.get("faults"), s) or 0),
                forfeited=bool(_at(result.get("forfeited"), s)),
            )
            for s, b in enumerate(match.seats)
        ]
        rows.append(MatchRow(match, cells))
    return rows


def cross_table(
    result: TournamentResult, limit: int | None = None
) -> list[tuple[str, list[Estimate | None]]]:
    """Rows in standings order (the first `limit`): each bot's score minus every other's
    (None on the diagonal)."""
    shown = result.standings[:limit]
    order = [s.bot_id for s in shown]
    pairs: dict[tuple[int, int], Estimate] = {}
    for pair in result.pairs:
        pairs[(pair.a_id, pair.b_id)] = pair.difference
        pairs[(pair.b_id, pair.a_id)] = pair.difference.flipped()
    return [
        (s.bot, [None if a == s.bot_id else pairs[(s.bot_id, a)] for a in order]) for s in shown
    ]


def signed(value: float | None) -> str:
    """A number with its sign and two decimals, a dash for none."""
    return "–" if value is None else f"{value:+.2f}".replace("-", "−")


def _fixed(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def standing_rows(
    result: TournamentResult, tags: Mapping[int, BotTag] | None = None
) -> list[dict[str, Any]]:
    """The standings as the page shows them: every cell already formatted (the live page
    writes the same strings), each bot with its version label and author from `tags`."""
    tags = tags or {}
    rows = []
    for rank, s in enumerate(result.standings, 1):
        rating = "–"
        if s.before is not None and s.after is not None:
            rating = f"{s.before.mu:.2f} → {s.after.mu:.2f}"
        row = {
            "bot": s.bot,
            "retired": s.retired,
            "cells": [
                str(rank),
                s.bot,
                str(s.matches),
                _fixed(s.mean, 2),
                f"{s.total:g}",
                " / ".join(str(p) for p in s.places),
                str(s.faults),
                str(s.forfeits),
                rating,
                _fixed(result.p_above_next(s.bot_id), 3),
            ],
        }
        rows.append(tagged(row, tags.get(s.bot_id)))
    return rows


def cross_rows(result: TournamentResult, limit: int | None = None) -> list[dict[str, Any]]:
    """The cross-table as the page shows it: per row bot, per column a mean and an interval
    (None on the diagonal)."""
    return [
        {
            "bot": bot,
            "cells": [
                None
                if e is None
                else {
                    "mean": signed(e.mean),
                    "interval": None if e.low is None else f"[{signed(e.low)}, {signed(e.high)}]",
                    "n": e.n,
                }
                for e in cells
            ],
        }
        for bot, cells in cross_table(result, limit)
    ]


def live_json(
    result: TournamentResult,
    tags: Mapping[int, BotTag] | None = None,
    cross_limit: int | None = CROSS_SHOWN,
) -> dict[str, Any]:
    """What a tournament page updates live: status, progress, standings (with each bot's
    version and author from `tags`) and cross-table (its first `cross_limit` bots)."""
    return {
        "status": result.tournament.status,
        "finished": result.finished,
        "scheduled": result.scheduled,
        "standings": standing_rows(result, tags),
        "cross": cross_rows(result, cross_limit),
        "cross_all": cross_limit is None or cross_limit >= len(result.standings),
    }


@dataclass
class TournamentView:
    """A tournament's page data, computed once per change of the tournament."""

    rows: TournamentRows
    result: TournamentResult
    matches: list[MatchRow]
    tags: dict[int, BotTag]
    live: dict[str, Any]

    @cached_property
    def live_all(self) -> dict[str, Any]:
        """The live data with the whole cross-table (made when first asked for)."""
        return live_json(self.result, self.tags, None)


class TournamentViews:
    """Tournament page data by tournament, recomputed only when its fingerprint changes (a
    match finished, its status changed): standings over many matches cost far more than one
    indexed count."""

    def __init__(self, store: StoreBase, size: int = 16) -> None:
        self._store = store
        self._size = size
        self._views: OrderedDict[int, tuple[object, TournamentView]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tournament_id: int) -> TournamentView:
        """The tournament's current page data (NotFoundError for an unknown id)."""
        key = web_queries.tournament_fingerprint(self._store, tournament_id)
        with self._lock:
            hit = self._views.get(tournament_id)
            if hit is not None and hit[0] == key:
                self._views.move_to_end(tournament_id)
                return hit[1]
        rows = web_queries.tournament_rows(self._store, tournament_id)
        result = summarise(rows)
        names = {b.id: b.name for b in rows.entrants if b.id is not None}
        tags = web_queries.bot_tags(self._store, names)
        view = TournamentView(
            rows, result, match_rows(rows.matches, names), tags, live_json(result, tags)
        )
        with self._lock:
            self._views[tournament_id] = (key, view)
            while len(self._views) > self._size:
                self._views.popitem(last=False)
        return view


def ranking_rows(
    rows: Sequence[RankingRow], tags: Mapping[int, BotTag] | None = None
) -> list[dict[str, Any]]:
    """A leaderboard as the page shows it, every number formatted (the live page writes the
    same strings), each bot with its version label and author from `tags`."""
    tags = tags or {}
    return [
        tagged(
            {
                "rank": r.rank,
                "bot": r.bot,
                "cells": ranking_cells(r),
            },
            tags.get(r.bot_id),
        )
        for r in rows
    ]
