"""`cardshark match list`: find matches by tournament, bot, game, faults and status."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from games.registry import get_game
from server.cli.common import DbOption, JsonOption, console, fail, open_store
from server.records import FAULT_KINDS
from tournaments.models import MatchStatus
from tournaments.store import MatchSummary

STATUSES = tuple(s.value for s in MatchStatus)


def match_list(
    tournament: Annotated[
        int | None, typer.Option("--tournament", metavar="ID", help="Only this tournament's.")
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
) -> None:
    """List matches newest first: id, tournament, status, seats, scores and faults."""
    if status is not None and status not in STATUSES:
        fail(f"unknown --status {status!r}; allowed: {', '.join(STATUSES)}")
    if fault_kind is not None and fault_kind not in FAULT_KINDS:
        fail(f"unknown --fault-kind {fault_kind!r}; allowed: {', '.join(FAULT_KINDS)}")
    if limit < 1:
        fail(f"--limit must be at least 1, not {limit}")
    with open_store(db) as store:
        found = store.find_matches(
            tournament_id=tournament,
            bot=bot,
            game=None if game is None else get_game(game).spec.name,
            statuses=() if status is None else (status,),
            faults=faults,
            fault_kind=fault_kind,
            limit=limit,
        )
    if as_json:
        print(json.dumps([m.to_json() for m in found], indent=2))
        return
    console.print(match_table(found, "Matches"))
    if len(found) == limit:
        console.print(f"(the newest {limit}; --limit N shows more)", highlight=False)


def match_table(matches: list[MatchSummary], title: str) -> Table:
    """Matches as a table: where each was played, who sat, scores, faults by kind."""
    table = Table(title=title)
    for column in ("id", "tournament"):
        table.add_column(column, justify="right")
    for column in ("game", "status", "round.table.rotation", "seats", "scores", "faults"):
        table.add_column(column)
    table.add_column("finished", no_wrap=True)
    for m in matches:
        scores = "" if m.scores is None else " ".join(f"{s:g}" for s in m.scores)
        table.add_row(
            str(m.id),
            str(m.tournament_id),
            m.game,
            m.status if m.void_reason is None else f"{m.status}: {m.void_reason}",
            f"{m.round}.{m.table}.{m.rotation}" + (f" (attempt {m.attempt})" if m.attempt else ""),
            ", ".join(m.seats),
            scores,
            fault_text(m),
            "" if m.finished is None else f"{m.finished:%Y-%m-%d %H:%M:%S}",
        )
    return table


def fault_text(match: MatchSummary) -> str:
    """A match's faults by seat and kind, e.g. `rand1: timeout×2`."""
    parts = []
    for name, count, kinds in zip(match.seats, match.faults, match.fault_kinds, strict=True):
        if count:
            named = ", ".join(f"{k}×{n}" for k, n in sorted(kinds.items())) or f"{count}"
            parts.append(f"{name}: {named}")
    return "; ".join(parts)
