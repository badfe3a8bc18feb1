"""`cardshark rankings` and `cardshark ratings ...`: leaderboards and their upkeep."""

from __future__ import annotations

import json

from rich.table import Table

from games.registry import get_game
from server.cli.common import (
    DbOption,
    JsonOption,
    command_group,
    console,
    open_store,
)
from tournaments.standings import TRUESKILL
from tournaments.store import Store

ratings_app = command_group("Maintain ratings.")


def show_rankings(store: Store, game: str, as_json: bool = False) -> None:
    """Print a game's leaderboard."""
    rows = store.rankings(game)
    if as_json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    table = Table(title=f"Rankings: {game}")
    widest = max((len(r.bot) for r in rows), default=3)
    for column in ("rank", "bot", "μ", "σ", "μ−3σ", "matches", "mean score", "faults"):
        if column == "bot":
            table.add_column(column, no_wrap=True, min_width=widest)  # names are never cut
        else:
            table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            str(r.rank),
            r.bot,
            f"{r.mu:.2f}",
            f"{r.sigma:.2f}",
            f"{r.conservative:.2f}",
            str(r.matches),
            f"{r.mean_score:.2f}",
            str(r.faults),
        )
    console.print(table)
    if rows:
        console.print(TRUESKILL, highlight=False)
    for tid, count in sorted(store.load_voids(game).items()):
        console.print(
            f"tournament {tid}: {count} match(es) voided for the server's load and replayed "
            "(never rated)",
            highlight=False,
        )


def rankings(game: str, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show a game's leaderboard: rank, bot, μ, σ, μ−3σ, matches, mean score, faults."""
    with open_store(db) as store:
        name = get_game(game).spec.name
        show_rankings(store, name, as_json)


@ratings_app.command("recompute")
def ratings_recompute(game: str, db: DbOption = None) -> None:
    """Rebuild every rating of a game from the stored matches, in schedule order."""
    with open_store(db) as store:
        count = store.recompute(get_game(game).spec.name)
    console.print(f"recomputed {game} ratings from {count} matches")
