"""The tournament page's data: standings and cross-table (tournaments.standings), the match list
with its filters, and each seat's score, faults and forfeit on the bot that made them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tournaments.models import Match, MatchStatus
from tournaments.standings import Estimate, TournamentResult

LISTED = 300  # matches shown at once; the filters narrow the rest down


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


def cross_table(result: TournamentResult) -> list[tuple[str, list[Estimate | None]]]:
    """Rows in standings order: each bot's score minus every other's (None on the diagonal)."""
    order = [s.bot_id for s in result.standings]
    return [
        (s.bot, [None if a == s.bot_id else result.difference(s.bot_id, a) for a in order])
        for s in result.standings
    ]


def signed(value: float | None) -> str:
    """A number with its sign and two decimals, a dash for none."""
    return "–" if value is None else f"{value:+.2f}".replace("-", "−")
