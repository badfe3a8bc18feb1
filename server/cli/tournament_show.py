"""`cardshark tournament show ID`: one tournament's standings, cross-table and rating change."""

from __future__ import annotations

import csv
import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from server.cli.common import DbOption, JsonOption, console, fail, open_store
from tournaments.ratings import Rating
from tournaments.standings import (
    INTERVAL,
    P_ABOVE,
    TRUESKILL,
    Estimate,
    TournamentResult,
    summarise,
)

TABLES = ("standings", "cross")
NA = "n/a"
P_NEXT = "P(above next)"


def tournament_show(
    tournament_id: Annotated[int, typer.Argument(metavar="ID", help="The tournament's id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
    as_csv: Annotated[
        bool,
        typer.Option(
            "--csv",
            help="Print one table as CSV (pick it with --table; unknown numbers are n/a).",
        ),
    ] = False,
    table: Annotated[
        str | None,
        typer.Option(
            "--table",
            metavar="TABLE",
            help="standings (one row per bot, the --csv default) or cross (one row per pair "
            "of bots: A's score minus B's); on a terminal, show only that table.",
        ),
    ] = None,
) -> None:
    """Show a tournament's result: standings, cross-table of pairs, ratings before and after.

    The cross-table's mean is the row bot's score minus the column bot's over the matches
    where both sat, with a 95 % Student t-interval over deals (a table's seat rotations in
    one round share one deal, so they count once); n/a below two deals."""
    if as_json and as_csv:
        fail("--json and --csv print different things; choose one")
    if table is not None and table not in TABLES:
        fail(f"unknown --table {table!r}; allowed: {', '.join(TABLES)}")
    with open_store(db) as store:
        result = summarise(store.tournament_rows(tournament_id))
    if as_json:
        print(json.dumps(result.to_json(), indent=2))
    elif as_csv:
        write_csv(result, table or "standings")
    else:
        show(result, table)


def write_csv(result: TournamentResult, table: str) -> None:
    """Print the standings or the cross-table as CSV with full-precision numbers."""
    out = csv.writer(sys.stdout, lineterminator="\n")
    if table == "cross":
        out.writerow(["a", "b", "matches", "n", "mean_difference", "ci_low", "ci_high"])
        for p in result.pairs:
            d = p.difference
            out.writerow([p.a, p.b, p.matches, d.n, _num(d.mean), _num(d.low), _num(d.high)])
        return
    seats = result.tournament.seats
    out.writerow(
        ["bot", "retired", "matches", "total_score", "mean_score"]
        + [f"place_{k}" for k in range(1, seats + 1)]
        + ["faults", "forfeits", "mu_before", "sigma_before", "mu_after", "sigma_after"]
        + ["p_above_next"]
    )
    for s in result.standings:
        out.writerow(
            [s.bot, str(s.retired).lower(), s.matches, _num(s.total), _num(s.mean)]
            + list(s.places)
            + [s.faults, s.forfeits]
            + _rating_cells(s.before)
            + _rating_cells(s.after)
            + [_num(result.p_above_next(s.bot_id))]
        )


def _num(value: float | None) -> str:
    return NA if value is None else repr(value)


def _rating_cells(rating: Rating | None) -> list[str]:
    return [NA, NA] if rating is None else [repr(rating.mu), repr(rating.sigma)]


def show(result: TournamentResult, only: str | None) -> None:
    """Print the result as tables, with the voided matches as lines under them."""
    t = result.tournament
    name = f" ({t.name})" if t.name else ""
    console.print(
        f"[bold]tournament {t.id}[/]{name}: {t.game} {t.format.replace('_', ' ')}, "
        f"{t.seats} seats, {t.status}, {result.finished}/{result.scheduled} matches"
        + (f", played by worker {t.worker}" if t.worker else ""),
        highlight=False,
    )
    if only in (None, "standings"):
        console.print(_standings(result))
        console.print(P_ABOVE, highlight=False)
        console.print(TRUESKILL, highlight=False)
    if only in (None, "cross"):
        console.print(_cross(result))
        console.print(f"cell: row bot's score minus column bot's, {INTERVAL}", highlight=False)
    console.print(
        f"{result.load_voids} match(es) voided for the server's load and replayed (never rated)",
        highlight=False,
    )
    if result.other_voids:
        console.print(
            f"{result.other_voids} match(es) voided for server failures and replayed (never rated)",
            highlight=False,
        )


def _standings(result: TournamentResult) -> Table:
    table = Table(title="Standings")
    widest = max((len(s.bot) for s in result.standings), default=3)
    table.add_column("#", justify="right")
    table.add_column("bot", no_wrap=True, min_width=widest)
    for column in ("matches", "total", "mean"):
        table.add_column(column, justify="right")
    for k in range(1, result.tournament.seats + 1):
        table.add_column(_ordinal(k), justify="right")
    for column in ("faults", "forfeits", "μ before → after", "σ before → after", P_NEXT):
        table.add_column(column, justify="right")
    for place, s in enumerate(result.standings, start=1):
        table.add_row(
            str(place),
            s.bot + (" (retired)" if s.retired else ""),
            str(s.matches),
            f"{s.total:g}",
            NA if s.mean is None else f"{s.mean:.2f}",
            *(str(n) for n in s.places),
            str(s.faults),
            str(s.forfeits),
            _change(s.before, s.after, "mu"),
            _change(s.before, s.after, "sigma"),
            _p_next(result, s.bot_id),
        )
    return table


def _p_next(result: TournamentResult, bot_id: int) -> str:
    """P(above next) to three places: n/a below two shared deals, empty for the last bot."""
    for pair in result.neighbours:
        if pair.a_id == bot_id:
            return NA if pair.p_above is None else f"{pair.p_above:.3f}"
    return ""


def _change(before: Rating | None, after: Rating | None, field: str) -> str:
    if before is None or after is None:
        return NA
    return f"{getattr(before, field):.2f} → {getattr(after, field):.2f}"


def _cross(result: TournamentResult) -> Table:
    table = Table(title="Cross-table: mean score difference [95 % interval] over n deals")
    bots = [(s.bot_id, s.bot) for s in result.standings]
    table.add_column("bot", no_wrap=True)
    for _, name in bots:
        table.add_column(name, justify="right")
    for row_id, row_name in bots:
        cells = [
            "" if row_id == col_id else _cell(result.difference(row_id, col_id))
            for col_id, _ in bots
        ]
        table.add_row(row_name, *cells)
    return table


def _cell(d: Estimate) -> str:
    if d.mean is None:
        return "never met"
    interval = NA if d.low is None or d.high is None else f"{d.low:+.2f}, {d.high:+.2f}"
    return f"{d.mean:+.2f} [{interval}] n={d.n}"


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
