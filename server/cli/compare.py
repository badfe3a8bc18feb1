"""`cardshark compare NEW BASE --game G`: two bots on the same deals, a sequential test per set.

The engine (sets, their values, the test, the saved state, the match loop) is
server.play.compare and server.play.compare_sets; here the options are read and the run
is reported.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from games.registry import get_game
from server.cli.common import (
    DbOption,
    JsonOption,
    SandboxOption,
    TransportOption,
    check_transport,
    clear_errors,
    errors,
    fail,
    log_directory,
    open_store,
    require_sandbox,
    stored_code,
)
from server.cli.referee_options import RefereeOptions
from server.play.compare import Run, entrants, open_run, play_sets
from server.play.compare_sets import (
    DEFAULT_H1,
    DEFAULT_MAX_SETS,
    CompareError,
    Config,
    new_config,
    result_json,
    resumed_config,
    verdict_line,
)
from tournaments.sequential import SprtSettings


def compare(
    new: Annotated[
        str | None, typer.Argument(help="The bot under test (a bot name or house:GAME:noise=X).")
    ] = None,
    base: Annotated[str | None, typer.Argument(help="The bot it is measured against.")] = None,
    game: Annotated[
        str | None, typer.Option("--game", help="The game to play (see `cardshark games`).")
    ] = None,
    field: Annotated[
        str | None,
        typer.Option(
            "--field",
            help="Bots in the other seats, comma-separated: one for every seat or one per "
            "seat (default: the game's rule bot, house:GAME:noise=0).",
        ),
    ] = None,
    h0: Annotated[
        float, typer.Option("--h0", help="H0: NEW leads by at most this, in points a match.")
    ] = 0.0,
    h1: Annotated[
        float, typer.Option("--h1", help="H1: NEW leads by at least this, in points a match.")
    ] = DEFAULT_H1,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Chance of 'better' when H0 holds.")
    ] = 0.05,
    beta: Annotated[
        float, typer.Option("--beta", help="Chance of 'not better' when H1 holds.")
    ] = 0.05,
    max_sets: Annotated[
        int, typer.Option("--max-sets", min=1, help="Stop undecided after this many sets.")
    ] = DEFAULT_MAX_SETS,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the deals (default: random, printed).")
    ] = None,
    move_ms: Annotated[
        int | None, typer.Option("--move-ms", min=1, help="Time per move (game default).")
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue the saved run with this id.")
    ] = None,
    log_dir: Annotated[
        Path,
        typer.Option("--log-dir", help="Bots' stderr, and finished sets in compare/ID.json."),
    ] = Path("logs"),
    sandbox: SandboxOption = "bwrap",
    transport: TransportOption = "local",
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Play NEW and BASE on the same deals in every seat until a sequential test decides."""
    check_transport(transport)
    try:
        settings = SprtSettings(h0, h1, alpha, beta)
    except ValueError as exc:
        fail(str(exc))
    config = _config(new, base, game, field, seed, move_ms, resume, log_dir)

    def say(line: str) -> None:
        print(line, file=sys.stderr if as_json else sys.stdout, flush=True)

    run = _open(config, settings, max_sets, sandbox, transport, db, log_dir)
    say(_header(run))
    if run.state["sets"]:
        say(f"continuing from {len(run.state['sets'])} saved sets ({run.path})")
    _play(run, say)
    result = run.result()
    if as_json:
        print(
            json.dumps(
                result_json(
                    config, settings, result, run.differences, max_sets, run.per_set, run.path
                )
            )
        )
    else:
        say(verdict_line(config, result, max_sets, run.per_set))


def _header(run: Run) -> str:
    """The run's first line: bots, game, field, seed, the test's settings and sets."""
    config, settings = run.config, run.settings
    field_text = ", ".join(config.field) or "none"
    return (
        f"compare {config.id}: {config.new} vs {config.base} in {get_game(config.game).spec.title}"
        f", field {field_text}, seed {config.seed}; H0 <= {settings.h0:g}, H1 >= "
        f"{settings.h1:g} points a match, alpha {settings.alpha:g}, beta {settings.beta:g}; "
        f"sets of {run.per_set} matches, at most {run.max_sets}"
    )


def _config(
    new: str | None,
    base: str | None,
    game: str | None,
    field: str | None,
    seed: int | None,
    move_ms: int | None,
    resume: str | None,
    log_dir: Path,
) -> Config:
    """The run the options name: the saved one to resume, or a new one (one line if not)."""
    try:
        if resume is not None:
            return resumed_config(log_dir, resume, {"NEW": new, "BASE": base, "--game": game})
        if new is None or base is None or game is None:
            fail("give NEW, BASE and --game (or --resume ID)")
        with clear_errors():
            spec = get_game(game).spec
        field_names = [f.strip() for f in (field or "").split(",") if f.strip()]
        return new_config(spec, new, base, field_names, seed, move_ms)
    except CompareError as exc:
        fail(str(exc))


def _open(
    config: Config,
    settings: SprtSettings,
    max_sets: int,
    sandbox: str,
    transport: str,
    db: str | None,
    log_dir: Path,
) -> Run:
    """The run with its bots found and their stored code unpacked (one line if not)."""
    with open_store(db, create=True) as store:
        try:
            found = entrants(store, config)
        except CompareError as exc:
            fail(str(exc))
        policy = RefereeOptions(sandbox=sandbox).policy(store, log_dir, check=False)
        require_sandbox(policy)
        players = [replace(p, workdir=stored_code(store, p.bot, d, policy)) for p, d in found]
    log_directory(log_dir)
    return open_run(config, settings, max_sets, players, policy, log_dir, transport)


def _play(run: Run, say: Callable[[str], None]) -> None:
    """Play the run's sets unless its saved ones decide it; exit 130 on Ctrl-C, 1 if it
    stopped (a bot ended), saying how to continue."""
    if run.decided() is not None:
        return
    with clear_errors():
        try:
            why = asyncio.run(play_sets(run, say))
        except KeyboardInterrupt:
            errors.print(
                f"interrupted after {len(run.state['sets'])} sets, saved in {run.path}; "
                f"continue with: cardshark compare --resume {run.config.id}",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(130) from None
    if why:
        errors.print(f"error: compare stopped: {why}", markup=False, highlight=False)
        errors.print(
            f"finished sets are saved; continue with: cardshark compare --resume {run.config.id}"
        )
        raise typer.Exit(1)
