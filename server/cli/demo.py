"""`cardshark demo`: a round robin of the example bots."""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

import typer

from games.registry import get_game
from server.bots.house import EXAMPLES, example_bots
from server.bots.sandbox import (
    unavailable_reason,
)
from server.cli.common import (
    DbOption,
    TransportOption,
    check_transport,
    console,
    open_store,
)
from server.cli.referee_options import RefereeOptions
from server.cli.running import run_with_progress
from server.cli.tournament_show import show_ending


def demo(
    game: Annotated[str, typer.Option(help="Any registered game.")] = "knaves",
    concurrency: Annotated[int, typer.Option(min=1)] = 2,
    rounds: Annotated[int, typer.Option(min=1)] = 2,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox", help="bwrap, none, or auto: bwrap where this machine can build it."
        ),
    ] = "auto",
    transport: TransportOption = "local",
    db: DbOption = None,
) -> None:
    """A round robin of the example bots (rules vs random) on the embedded SQLite default;
    ends with its standings and the next two commands to try."""
    check_transport(transport)
    if sandbox == "auto":  # the demo's bots are our own examples: no sandbox tool is no reason
        sandbox = "bwrap" if unavailable_reason() is None else "none"
    with open_store(db, create=True) as store:
        referee = RefereeOptions(sandbox=sandbox, transport=transport)
        policy = referee.policy(store, check=False)
        spec = get_game(game).spec
        entrants = example_bots(spec.name, spec.default_seats)
        known = {b.name for b in store.list_bots()}
        for name, script in entrants.items():
            if name not in known:
                store.add_bot(name, shlex.join([sys.executable, str(EXAMPLES / script)]))
        tournament = store.create_tournament(spec.name, list(entrants), rounds=rounds)
        assert tournament.id is not None
        console.print(
            f"demo: tournament {tournament.id}, {spec.title}, {len(entrants)} example bots "
            f"(database {store.url})"
        )
        run_with_progress(store, tournament.id, referee, None, policy, concurrency, 0)
        show_ending(store, tournament.id, db, serve=True)
