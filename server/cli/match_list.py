"""`cardshark match list`: find matches by tournament, bot, game, faults and status."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

import typer

from games.registry import get_game
from server.cli.common import DbOption, JsonOption, console, fail, open_store
from server.cli.tables import Column, WideOption, print_table
from server.match.records import FAULT_KINDS
from tournaments.models import MatchStatus, Tournament
from tournaments.store import MatchSummary, Store

STATUSES = tuple(s.value for s in MatchStatus)


def match_list(
    tournament: Annotated[
        str | None,
        typer.Option(
            "--tournament",
            metavar="ID",
            help="Only this tournament's (default: the latest, of --game if given; "
            "all: every tournament's).",
        ),
    ] = None,
    bot: Annotated[
        str | None,
        typer.Option("--bot", metavar="NAME", help="Only matches this bot sat in (retired too)."),
    ] = None,
    game: Annotated[
        str | None, typer.Option("--game", metavar="GAME", help="Only this game's.")
    ] = None,
    faults: Annotated[
        bool,
        typer.Option("--faults", help="Only matches with a fault (with --bot: one of that bot's)."),
    ] = False,
    fault_kind: Annotated[
        str | None,
        typer.Option(
            "--fault-kind",
            metavar="KIND",
            help=f"Only matches with a fault of this kind ({', '.join(FAULT_KINDS)}); "
            "implies --faults.",
        ),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", metavar="STATUS", help=f"Only these: {', '.join(STATUSES)}."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", help="At most N matches, newest first.")
    ] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """List matches newest first: id, tournament, status, seats, scores and faults; the
    latest tournament's unless --tournament says which (or all)."""
    query = MatchQuery(tournament, bot, game, faults, fault_kind, status, limit)
    query.check()
    with open_store(db) as store:
        listing = query.find(store)
    if listing is None:
        return
    if as_json:
        print(json.dumps([m.to_json() for m in listing.matches], indent=2))
        return
    listing.show(wide)


@dataclass(frozen=True)
class MatchQuery:
    """The matches `match list` asks for: its filters as given on the command line."""

    tournament: str | None
    bot: str | None
    game: str | None
    faults: bool
    fault_kind: str | None
    status: str | None
    limit: int

    def check(self) -> None:
        """Refuse an unknown status or fault kind, a bad limit or tournament, in one line."""
        if self.status is not None and self.status not in STATUSES:
            fail(f"unknown --status {self.status!r}; allowed: {', '.join(STATUSES)}")
        if self.fault_kind is not None and self.fault_kind not in FAULT_KINDS:
            fail(f"unknown --fault-kind {self.fault_kind!r}; allowed: {', '.join(FAULT_KINDS)}")
        if self.limit < 1:
            fail(f"--limit must be at least 1, not {self.limit}")
        if self.tournament not in (None, "all") and not self.tournament.isdigit():
            fail(f"--tournament takes an id or all, not {self.tournament!r}")

    def find(self, store: Store) -> MatchListing | None:
        """The matches found; None (said on the terminal) when there is no latest tournament
        to default to."""
        game_name = None if self.game is None else get_game(self.game).spec.name
        latest = None
        chosen = None  # every tournament's
        if self.tournament is None:
            newest = store.list_tournaments(game=game_name)
            if not newest:
                of = "" if game_name is None else f" of {game_name}"
                console.print(f"no matches: no tournaments{of} yet", highlight=False)
                return None
            latest = newest[0]
            chosen = latest.id
        elif self.tournament != "all":
            chosen = int(self.tournament)
        found = store.find_matches(
            tournament_id=chosen,
            bot=self.bot,
            game=game_name,
            statuses=() if self.status is None else (self.status,),
            faults=self.faults,
            fault_kind=self.fault_kind,
            limit=self.limit,
        )
        return MatchListing(found, latest, self.limit)


@dataclass(frozen=True)
class MatchListing:
    """What `match list` found, and the latest tournament when it defaulted to that."""

    matches: list[MatchSummary]
    latest: Tournament | None
    limit: int

    def show(self, wide: bool) -> None:
        """The matches as a table, with which tournament they are of and whether more exist."""
        if self.latest is not None:
            console.print(
                f"tournament {self.latest.id} ({self.latest.game}), the latest "
                "(--tournament ID or all for others)",
                highlight=False,
            )
        print_matches(self.matches, "Matches", "no matches found", wide)
        if len(self.matches) == self.limit:
            console.print(f"(the newest {self.limit}; --limit N shows more)", highlight=False)


def print_matches(matches: list[MatchSummary], title: str, empty: str, wide: bool) -> None:
    """Matches as a table fitted to the terminal: where each was played, who sat, scores,
    faults by kind."""
    columns = [
        Column("id", justify="right"),
        Column("tournament", 5, "right"),
        Column("game", 4),
        Column("status", 1, wrap=True),
        Column("rnd.tbl.rot", 3, wrap=True),
        Column("seats", wrap=True),
        Column("scores", wrap=True),
        Column("faults", 2, wrap=True),
        Column("finished", 4),
    ]
    rows = [
        [
            str(m.id),
            str(m.tournament_id),
            m.game,
            m.status if m.void_reason is None else f"{m.status}: {m.void_reason}",
            f"{m.round}.{m.table}.{m.rotation}" + (f" (attempt {m.attempt})" if m.attempt else ""),
            ", ".join(m.seats),
            "" if m.scores is None else " ".join(f"{s:g}" for s in m.scores),
            fault_text(m),
            "" if m.finished is None else f"{m.finished:%Y-%m-%d %H:%M:%S}",
        ]
        for m in matches
    ]
    print_table(title, columns, rows, empty=empty, wide=wide)


def fault_text(match: MatchSummary) -> str:
    """A match's faults by seat and kind, e.g. `rand1: timeout×2`."""
    parts = []
    for name, count, kinds in zip(match.seats, match.faults, match.fault_kinds, strict=True):
        if count:
            named = ", ".join(f"{k}×{n}" for k, n in sorted(kinds.items())) or f"{count}"
            parts.append(f"{name}: {named}")
    return "; ".join(parts)
