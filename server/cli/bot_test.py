"""`cardshark bot test`: a registered bot against the house bots, with nothing stored.

The engine (the house, the matches, the verdict) is server.play.bot_test; here the options
are read, the plan made and the outcome printed.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from games.base import GameSpec
from games.registry import get_game
from server.cli.common import (
    REMOTE_PORT,
    DbOption,
    JsonOption,
    SandboxOption,
    TransportOption,
    check_listen,
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
from server.play.bot_test import Outcome, Plan, house_bots, play_trial, report_json, summary
from server.play.tournament import database_authenticator, identity_for
from tournaments.store import Store


def bot_test(
    name: str,
    game: Annotated[str, typer.Option("--game", help="The game to play (see `cardshark games`).")],
    matches: Annotated[
        int, typer.Option("--matches", help="Matches to play, the bot in each seat in turn.")
    ] = 3,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the deals (default: random, printed).")
    ] = None,
    move_ms: Annotated[
        int | None, typer.Option("--move-ms", help="Time per move (game default).")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", help=f"Port a remote bot dials (default {REMOTE_PORT}; 0: any free port)."
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    log_dir: Annotated[
        Path, typer.Option("--log-dir", help="Where bots' stderr goes (in bot-test/).")
    ] = Path("logs"),
    sandbox: SandboxOption = "bwrap",
    transport: TransportOption = "local",
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Play a bot against the house bots, nothing stored; list its faults (exit 1 if any)."""
    if matches < 1:
        fail(f"--matches must be at least 1, not {matches}")
    if move_ms is not None and move_ms < 1:
        fail(f"--move-ms must be at least 1, not {move_ms}")
    check_transport(transport)
    with clear_errors():
        spec = get_game(game).spec

    def say(line: str) -> None:
        print(line, file=sys.stderr if as_json else sys.stdout, flush=True)

    with open_store(db) as store:  # open while the test runs: a remote bot's token is checked
        plan = _plan(
            store, name, spec, matches, seed, move_ms, port, host, log_dir, sandbox, transport
        )
        log_directory(log_dir)
        if not as_json:
            house = ", ".join(house_bots(plan.game, plan.seats))
            say(
                f"bot test: {plan.name} ({'managed' if plan.command else 'remote'}) against "
                f"{house} in {spec.title}, {matches} match{'es' if matches != 1 else ''}, "
                f"seed {plan.seed}, {plan.move_ms} ms a move"
            )
        with clear_errors():
            try:
                outcome = asyncio.run(play_trial(plan, _silent if as_json else say, say))
            except KeyboardInterrupt:
                errors.print("interrupted; nothing was stored")
                raise typer.Exit(130) from None
    _report(plan, outcome, as_json, say)


def _plan(
    store: Store,
    name: str,
    spec: GameSpec,
    matches: int,
    seed: int | None,
    move_ms: int | None,
    port: int | None,
    host: str,
    log_dir: Path,
    sandbox: str,
    transport: str,
) -> Plan:
    """What the test plays: the stored bot, its sandbox and code, the deals, and for a remote
    bot the port it dials (checked free, one line if not)."""
    bot = store.get_bot(name)
    assert bot.id is not None
    remote = not bot.command
    policy = RefereeOptions(sandbox=sandbox).policy(store, log_dir, check=False)
    require_sandbox(policy)  # the house bots are managed, whatever the tested bot is
    workdir = stored_code(store, bot.name, bot.code_digest, policy)
    plan = Plan(
        name=bot.name,
        bot=identity_for(bot.id, bot.name),
        command=bot.command,
        game=spec.name,
        seats=spec.default_seats,
        matches=matches,
        seed=secrets.randbelow(2**31) if seed is None else seed,
        move_ms=move_ms or spec.move_ms,
        sandbox=policy,
        log_dir=log_dir / "bot-test",
        host=host,
        port=(REMOTE_PORT if remote else 0) if port is None else port,
        authenticate=database_authenticator(store) if remote else None,
        transport=transport,
        workdir=workdir,
    )
    if remote:
        check_listen(
            host, plan.port, purpose=f"{plan.name} to dial", then=" and start the bot "
            "with --server HOST:PORT",
        )  # fmt: skip
    return plan


def _report(plan: Plan, outcome: Outcome, as_json: bool, say: Callable[[str], None]) -> NoReturn:
    """Print the outcome (the report for --json, else the verdict after the stderr of a bot
    that ended) and exit 0 if it passed, 1 if not (2: the server could not start the house)."""
    if outcome.error:
        fail(outcome.error)
    result = summary(plan, outcome)
    if as_json:
        print(json.dumps(report_json(plan, outcome, result), indent=2))
    else:
        if outcome.ended and plan.stderr_log is not None:
            say(f"{plan.name}'s stderr ({plan.stderr_log}), last lines:")
            for line in outcome.stderr or ["(nothing)"]:
                say(f"  {line}")
        elif not result["passed"] and plan.stderr_log is not None:
            say(f"{plan.name}'s stderr: {plan.stderr_log}")
        say(result["verdict"])
    raise typer.Exit(0 if result["passed"] else 1)


def _silent(line: str) -> None:
    return None
