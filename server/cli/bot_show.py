"""`cardshark bot show NAME`: a bot's ratings per game, faults by kind and latest matches."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from server.cli.common import DbOption, JsonOption, console, fail, open_store
from server.cli.match_list import print_matches
from server.cli.tables import Column, WideOption, print_table
from tournaments.store import BotProfile


def bot_show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The bot's name.")],
    recent: Annotated[
        int,
        typer.Option("--recent", metavar="N", help="Show its N latest played matches (0: none)."),
    ] = 10,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Show a bot (retired ones too): ratings per game, faults by kind, latest matches.

    Faults are those charged in finished matches; voided matches are never charged."""
    if recent < 0:
        fail(f"--recent must be 0 or more, not {recent}")
    with open_store(db) as store:
        profile = store.bot_profile(name, recent=recent)
    if as_json:
        print(json.dumps(profile_json(profile), indent=2))
        return
    print_profile(profile, wide)


def profile_json(profile: BotProfile) -> dict[str, Any]:
    """A bot's profile as `bot show --json` prints it."""
    bot = profile.bot
    return {
        "id": bot.id,
        "name": bot.name,
        "author": profile.author,
        "kind": "managed" if bot.command else "remote",
        "created": bot.created.isoformat(),
        "retired": None if bot.removed is None else bot.removed.isoformat(),
        "tournaments": profile.tournaments,
        "ratings": [
            {
                "game": r.game,
                "mu": r.mu,
                "sigma": r.sigma,
                "conservative": r.rating.conservative,
                "matches": r.matches,
                "mean_score": r.score_sum / r.matches if r.matches else None,
                "faults": r.faults,
            }
            for r in profile.ratings
        ],
        "faults": profile.faults,
        "recent": [m.to_json() for m in profile.recent],
    }


def print_profile(profile: BotProfile, wide: bool) -> None:
    """A bot's profile in words and tables: who it is, its ratings, faults and latest matches."""
    bot = profile.bot
    retired = f", [bold red]retired[/] {bot.removed:%Y-%m-%d %H:%M}" if bot.removed else ""
    console.print(
        f"[bold]bot {bot.name}[/] (id {bot.id}), {'managed' if bot.command else 'remote'}, "
        f"by {escape(profile.author)}, "
        f"registered {bot.created:%Y-%m-%d %H:%M}{retired}, "
        f"{profile.tournaments} tournament(s)",
        highlight=False,
    )
    print_table(
        "Ratings",
        [
            Column("game"),
            Column("μ", 1, "right"),
            Column("σ", 3, "right"),
            Column("μ−3σ", justify="right"),
            Column("matches", justify="right"),
            Column("mean score", 2, "right"),
            Column("faults", 2, "right"),
        ],
        [
            [
                r.game,
                f"{r.mu:.2f}",
                f"{r.sigma:.2f}",
                f"{r.rating.conservative:.2f}",
                str(r.matches),
                f"{r.score_sum / r.matches:.2f}" if r.matches else "n/a",
                str(r.faults),
            ]
            for r in profile.ratings
        ],
        empty="no rated matches yet",
        wide=wide,
    )
    if profile.faults:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(profile.faults.items()))
        console.print(f"faults by kind: {kinds}", highlight=False)
    else:
        console.print("faults by kind: none")
    if profile.recent:
        print_matches(profile.recent, f"Latest {len(profile.recent)} matches", "", wide)
