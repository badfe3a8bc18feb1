"""`cardshark tournament show [ID]`: one tournament's standings, cross-table and rating change."""

from __future__ import annotations

import csv
import json
import os
import shlex
import sys
from typing import Annotated

import typer

from server.cli.common import DbOption, JsonOption, console, fail, open_store
from server.cli.tables import Column, Fitted, WideOption, print_table, width_of
from tournaments.ratings import Rating
from tournaments.standings import (
    INTERVAL,
    P_ABOVE,
    TRUESKILL,
    Estimate,
    TournamentResult,
    summarise,
)
from tournaments.store import Store

TABLES = ("standings", "cross")
NA = "n/a"
P_NEXT = "P(above next)"


def tournament_show(
    tournament_id: Annotated[
        int | None,
        typer.Argument(metavar="ID", help="The tournament's id (default: the latest)."),
    ] = None,
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
    wide: WideOption = False,
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
        tid = latest_tournament(store) if tournament_id is None else tournament_id
        result = summarise(store.tournament_rows(tid))
    if as_json:
        print(json.dumps(result.to_json(), indent=2))
    elif as_csv:
        write_csv(result, table or "standings")
    else:
        show(result, table, wide)


def latest_tournament(store: Store, game: str | None = None) -> int:
    """The newest tournament's id (of one game if given), or one line saying there is none."""
    found = store.list_tournaments(game=game)
    if not found or found[0].id is None:
        of = f" of {game}" if game else ""
        fail(f"no tournaments{of} yet; `cardshark tournament run` or `cardshark demo` makes one")
    return found[0].id


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


def show(result: TournamentResult, only: str | None, wide: bool = False) -> None:
    """Print the result as tables fitted to the terminal, with the voided matches as lines."""
    t = result.tournament
    name = f" ({t.name})" if t.name else ""
    console.print(
        f"[bold]tournament {t.id}[/]{name}: {t.game} {t.format.replace('_', ' ')}, "
        f"{t.seats} seats, {t.status}, {result.finished}/{result.scheduled} matches"
        + (f", played by worker {t.worker}" if t.worker else ""),
        highlight=False,
    )
    if only in (None, "standings"):
        print_standings(result, wide)
    if only in (None, "cross"):
        _print_cross(result, wide)
    if result.load_voids:
        console.print(
            f"{result.load_voids} match(es) voided for the server's load and replayed "
            "(never rated)",
            highlight=False,
        )
    if result.other_voids:
        console.print(
            f"{result.other_voids} match(es) voided for server failures and replayed (never rated)",
            highlight=False,
        )


def print_standings(
    result: TournamentResult,
    wide: bool = False,
    title: str = "Standings",
    hint: str | None = "--wide shows them",
) -> Fitted | None:
    """The standings fitted to the terminal, each figure's meaning under it when shown."""
    fitted = print_table(
        title,
        *_standings(result),
        empty="no entrants",
        wide=wide,
        hint=hint,
    )
    shown = fitted.shown if fitted is not None else set()
    if P_NEXT in shown:
        console.print(P_ABOVE, highlight=False)
    if MU in shown:
        console.print(TRUESKILL, highlight=False)
    return fitted


def show_ending(store: Store, tournament_id: int, db: str | None, serve: bool = False) -> None:
    """How a run ends: this tournament's standings and the command that shows more (with
    `serve`, the web page's too)."""
    result = summarise(store.tournament_rows(tournament_id))
    fitted = print_standings(result, title=f"Standings of tournament {tournament_id}", hint=None)
    hidden = fitted is not None and fitted.hidden
    on = db_flag(db)
    show = f"cardshark tournament show {tournament_id}{on}" + (" --wide" if hidden else "")
    more = f"({'every column, ' if hidden else ''}who beat whom, rating changes)"
    if not serve:
        console.print(f"more: {show}  {more}", highlight=False)
        return
    console.print(f"next: {show}  {more}", highlight=False)
    console.print(
        f"      cardshark serve{on}  (then open http://127.0.0.1:8080/tournaments/{tournament_id})",
        highlight=False,
    )


def db_flag(db: str | None) -> str:
    """` --db URL` for a command to print, unless the database is the default or CARDSHARK_DB's."""
    if db is None or db == os.environ.get("CARDSHARK_DB"):
        return ""
    return f" --db {shlex.quote(db)}"


MU = "μ before → after"


def _standings(result: TournamentResult) -> tuple[list[Column], list[list[str]]]:
    forfeits = any(s.forfeits for s in result.standings)
    columns = [
        Column("#", justify="right"),
        Column("bot"),
        Column("matches", justify="right"),
        Column("total", 4, "right"),
        Column("mean", justify="right"),
        *(Column(_ordinal(k), 6, "right") for k in range(1, result.tournament.seats + 1)),
        Column("faults", 3, "right"),
        Column("forfeits", 3 if forfeits else 5, "right"),
        Column(MU, 1, "right"),
        Column("σ before → after", 7, "right"),
        Column(P_NEXT, 2, "right"),
    ]
    rows = [
        [
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
        ]
        for place, s in enumerate(result.standings, start=1)
    ]
    return columns, rows


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


CROSS = "Cross-table: mean score difference [95 % interval] over n deals"


def _print_cross(result: TournamentResult, wide: bool) -> None:
    """Who beat whom: a matrix where it fits the terminal (or --wide), else one row per pair."""
    bots = [(s.bot_id, s.bot) for s in result.standings]
    if len(bots) < 2:
        console.print("cross-table: fewer than two entrants", highlight=False)
        return
    columns = [Column("bot"), *(Column(name, justify="right") for _, name in bots)]
    rows = [
        [row_name]
        + [
            "" if row_id == col_id else _cell(result.difference(row_id, col_id))
            for col_id, _ in bots
        ]
        for row_id, row_name in bots
    ]
    if wide or width_of(columns, rows) <= console.width:
        print_table(CROSS, columns, rows, empty="", wide=True)
        console.print(f"cell: row bot's score minus column bot's, {INTERVAL}", highlight=False)
        return
    pairs = [
        [
            p.a,
            p.b,
            str(p.matches),
            "never met" if p.difference.mean is None else f"{p.difference.mean:+.2f}",
            _interval(p.difference),
            str(p.difference.n),
        ]
        for p in result.pairs
    ]
    print_table(
        "Who beat whom: A's mean score minus B's over the deals both played",
        [
            Column("A"),
            Column("B"),
            Column("matches", 2, "right"),
            Column("A − B", justify="right"),
            Column("95 % interval", 1, "right"),
            Column("deals", justify="right"),
        ],
        pairs,
        empty="no pairs",
        wide=wide,
    )
    console.print(
        f"one row per pair, as the cross-table is wider than {console.width} columns "
        f"(--wide shows it); {INTERVAL}",
        highlight=False,
    )


def _interval(d: Estimate) -> str:
    return NA if d.low is None or d.high is None else f"{d.low:+.2f}, {d.high:+.2f}"


def _cell(d: Estimate) -> str:
    if d.mean is None:
        return "never met"
    return f"{d.mean:+.2f} [{_interval(d)}] n={d.n}"


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
