"""`cardshark rankings` and `cardshark ratings ...`: leaderboards and their upkeep."""

from __future__ import annotations

import json

from games.registry import get_game
from server.cli.common import (
    DbOption,
    JsonOption,
    command_group,
    console,
    open_store,
)
from server.cli.tables import Column, WideOption, print_table
from server.views.rankings import ranking_cells
from tournaments.standings import TRUESKILL
from tournaments.store import Store

ratings_app = command_group("Maintain ratings.")


def show_rankings(store: Store, game: str, as_json: bool = False, wide: bool = False) -> None:
    """Print a game's leaderboard."""
    rows = store.rankings(game)
    if as_json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    print_table(
        f"Rankings: {game}",
        [
            Column("rank", justify="right"),
            Column("bot"),
            Column("μ", 1, "right"),
            Column("σ", 3, "right"),
            Column("μ−3σ", justify="right"),
            Column("matches", justify="right"),
            Column("mean score", 2, "right"),
            Column("faults", 2, "right"),
        ],
        [[str(r.rank), r.bot, *ranking_cells(r)] for r in rows],
        empty=f"no rated {game} matches yet; `cardshark tournament run {game}` plays some",
        wide=wide,
    )
    if rows:
        console.print(TRUESKILL, highlight=False)
    for tid, count in sorted(store.load_voids(game).items()):
        console.print(
            f"tournament {tid}: {count} match(es) voided for the server's load and replayed "
            "(never rated)",
            highlight=False,
        )


def rankings(
    game: str, db: DbOption = None, as_json: JsonOption = False, wide: WideOption = False
) -> None:
    """Show a game's leaderboard: rank, bot, μ, σ, μ−3σ, matches, mean score, faults."""
    with open_store(db) as store:
        name = get_game(game).spec.name
        show_rankings(store, name, as_json, wide)


@ratings_app.command("recompute")
def ratings_recompute(game: str, db: DbOption = None) -> None:
    """Rebuild every rating of a game from the stored matches, in schedule order."""
    with open_store(db) as store:
        count = store.recompute(get_game(game).spec.name)
    console.print(f"recomputed {game} ratings from {count} matches")
