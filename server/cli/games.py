"""`cardshark games`: the games with their seats and options."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

import games
from games.registry import all_games
from server.cli.common import JsonOption
from server.cli.tables import Column, print_table

VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Also say whether the engines run compiled (mypyc) or as pure Python, and why.",
    ),
]


def games_command(as_json: JsonOption = False, verbose: VerboseOption = False) -> None:
    """List every game with its seat counts and options (with defaults)."""
    rows: list[dict[str, Any]] = []
    for name, game in all_games().items():
        spec = game.spec
        rows.append(
            {
                "name": name,
                "title": spec.title,
                "seats": list(spec.seat_counts),
                "default_seats": spec.default_seats,
                "move_ms": spec.move_ms,
                "options": [
                    {
                        "name": o.name,
                        "default": o.default,
                        "allowed": o.describe_allowed(),
                        "doc": o.doc,
                    }
                    for o in spec.options
                ],
            }
        )
    engines = f"engines: {games.ENGINES.describe()}"
    if as_json:
        print(json.dumps(rows, indent=2))
        if verbose:
            print(engines, file=sys.stderr)  # the JSON stays the JSON
        return
    print_table(
        "Games",
        [Column("game"), Column("seats", wrap=True), Column("options (default)", wrap=True)],
        [
            [
                row["name"],
                ", ".join(str(s) for s in row["seats"]),
                ", ".join(f"{o['name']}={o['default']}" for o in row["options"]) or "-",
            ]
            for row in rows
        ],
        empty="no games registered",
    )
    if verbose:
        print(engines)
