"""`cardshark tournament ...`: run, resume, list and inspect tournaments."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Annotated

import typer

from games.registry import get_game
from server.bots.house import resolve_names
from server.bots.sandbox import SandboxPolicy
from server.cli.common import (
    REMOTE_HINT,
    AllowAbsentOption,
    DbOption,
    JsonOption,
    PortOption,
    WaitOption,
    check_listen,
    command_group,
    console,
    fail,
    open_store,
    remote_port,
    require_sandbox,
)
from server.cli.referee_options import RefereeOptions, referee_options
from server.cli.running import run_with_progress
from server.cli.schedule import Schedule
from server.cli.tables import Column, WideOption, print_table
from server.cli.tournament_show import show_ending
from server.cli.until_confident import play_until_confident
from server.match.records import REMOTE_WAIT_S
from tournaments.confidence import DEFAULT_MAX_ROUNDS, ConfidenceGoal
from tournaments.store import Store, TournamentProgress

ProcessesOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Referee processes, each on a core with its own copy of the managed bots "
        "(default: one per 200 unfinished matches, up to one per core; docs/performance.md); "
        "a run with remote bots uses one.",
    ),
]

tournament_app = command_group("Run and inspect tournaments.")


@tournament_app.command("run")
@referee_options()
def tournament_run(
    game: str,
    bots: Annotated[str, typer.Option(help="Comma-separated bot names (at least the seat count).")],
    rounds: Annotated[
        int, typer.Option(min=1, help="Repeat the round robin with fresh seeds.")
    ] = 1,
    tables: Annotated[
        int | None, typer.Option(min=1, help="Play a balanced subset of N tables.")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, help="Matches at once (default: two per core)."),
    ] = None,
    move_ms: Annotated[
        int | None, typer.Option(min=1, help="Time per move (game default).")
    ] = None,
    bank_ms: Annotated[int, typer.Option(min=0, help="Time bank per seat per match.")] = 0,
    seats: Annotated[int | None, typer.Option(help="Seat count, for games with several.")] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="Game option NAME=VALUE (repeatable).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Master seed (default: random).")] = None,
    port: PortOption = 0,
    create_only: Annotated[
        bool, typer.Option(help="Store it and its schedule; play later with `resume ID`.")
    ] = False,
    gauntlet: Annotated[
        bool, typer.Option(help="The first bot meets the field at every table (no round robin).")
    ] = False,
    until_confident: Annotated[
        float | None,
        typer.Option(
            metavar="P",
            help="Add rounds until every neighbour pair of the standings is separated at "
            "confidence P (docs/statistics.md), up to --max-rounds.",
        ),
    ] = None,
    max_rounds: Annotated[
        int | None,
        typer.Option(
            min=1, help=f"With --until-confident: at most N rounds (default {DEFAULT_MAX_ROUNDS})."
        ),
    ] = None,
    allow_absent: AllowAbsentOption = False,
    wait_s: WaitOption = REMOTE_WAIT_S,
    processes: ProcessesOption = None,
    db: DbOption = None,
    *,
    referee: RefereeOptions,
) -> None:
    """Create a round robin (or gauntlet), play it with a progress bar, show its standings."""
    names = [b.strip() for b in bots.split(",") if b.strip()]
    goal = confidence_goal(until_confident, max_rounds, rounds)
    referee.check()
    check_listen(referee.host, port, purpose="remote bots", zero=None, then=REMOTE_HINT)
    tls = referee.tls()
    schedule = Schedule(game, rounds, tables, move_ms, bank_ms, seats, option or [], seed, gauntlet)
    with open_store(db) as store:
        names = resolve_names(store, names)  # house:GAME:noise=X: a stored house bot
        policy = referee.policy(store, check=False)
        if not create_only:
            check_entrants(store, names, policy, referee.host, port)
        tid = schedule.create(store, names).id
        assert tid is not None
        if goal is not None:
            store.set_goal(tid, goal)
        scheduled = store.tournament_status(tid).scheduled
        console.print(
            f"tournament {tid}: {game}, {len(names)} bots, {scheduled} matches"
            + match_ids(store, tid),
            highlight=False,
        )
        if create_only:
            console.print(f"play it with: cardshark tournament resume {tid}")
            return
        play = (store, tid, referee, tls, policy, concurrency, port, allow_absent, wait_s)
        play_to_the_end(store, tid, partial(run_with_progress, *play, processes))
        show_ending(store, tid, db)


def check_entrants(
    store: Store, names: list[str], policy: SandboxPolicy, host: str, port: int
) -> None:
    """Refuse, before anything is stored, managed entrants where no sandbox works and remote
    ones when their port is taken."""
    entered = [b for b in store.list_bots() if b.name in names]
    if any(b.command for b in entered):
        require_sandbox(policy)
    if any(not b.command for b in entered):
        remote_port(host, port)


def play_to_the_end(store: Store, tournament_id: int, play: Callable[[], None]) -> None:
    """Play what is unfinished with `play`; a tournament with an --until-confident goal goes
    on adding rounds until its verdict."""
    if store.goal(tournament_id) is None:
        play()
    else:
        play_until_confident(store, tournament_id, play)


def match_ids(store: Store, tournament_id: int) -> str:
    """`, match ids 49–60`: the ids its schedule was stored under, for `match show`."""
    ids = [m.id for m in store.matches(tournament_id) if m.id is not None]
    return f", match ids {min(ids)}–{max(ids)}" if ids else ""


def confidence_goal(
    until_confident: float | None, max_rounds: int | None, rounds: int
) -> ConfidenceGoal | None:
    """The --until-confident goal of a new tournament, checked before anything is stored."""
    if until_confident is None:
        if max_rounds is not None:
            fail("--max-rounds caps --until-confident; give both or neither")
        return None
    try:
        goal = ConfidenceGoal(until_confident, max_rounds or max(DEFAULT_MAX_ROUNDS, rounds))
    except ValueError as exc:
        fail(f"--until-confident: {exc}")
    if goal.max_rounds < rounds:
        fail(f"--max-rounds {goal.max_rounds} is below --rounds {rounds}")
    return goal


@tournament_app.command("resume")
@referee_options()
def tournament_resume(
    tournament_id: int,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Matches at once (default: two per core).")
    ] = None,
    port: PortOption = 0,
    allow_absent: AllowAbsentOption = False,
    wait_s: WaitOption = REMOTE_WAIT_S,
    processes: ProcessesOption = None,
    db: DbOption = None,
    *,
    referee: RefereeOptions,
) -> None:
    """Play whatever a stopped tournament left unfinished, then show its standings; one made
    with --until-confident goes on adding rounds as it would have."""
    referee.check()
    check_listen(referee.host, port, purpose="remote bots", zero=None, then=REMOTE_HINT)
    tls = referee.tls()
    with open_store(db) as store:
        store.get_tournament(tournament_id)  # an unknown id: one line before anything starts
        policy = referee.policy(store, check=False)
        args = (store, tournament_id, referee, tls, policy, concurrency, port, allow_absent)
        play = partial(run_with_progress, *args, wait_s, processes)
        play_to_the_end(store, tournament_id, play)
        show_ending(store, tournament_id, db)


@tournament_app.command("list")
def tournament_list(
    db: DbOption = None, as_json: JsonOption = False, wide: WideOption = False
) -> None:
    """List tournaments: status, progress (finished/scheduled), how to resume unfinished ones."""
    with open_store(db) as store:
        progress = [store.tournament_status(t.id) for t in store.list_tournaments() if t.id]
    rows = [
        (p, f"cardshark tournament resume {p.tournament.id}" if p.resumable else None)
        for p in progress
    ]
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": p.tournament.id,
                        "game": p.tournament.game,
                        "status": p.tournament.status,
                        "finished": p.finished,
                        "scheduled": p.scheduled,
                        "worker": p.tournament.worker,
                        "resume": resume,
                    }
                    for p, resume in rows
                ]
            )
        )
        return
    print_table(
        "Tournaments",
        [
            Column("id"),
            Column("game"),
            Column("status"),
            Column("progress", justify="right"),
            Column("resume", 1),
            Column("created", 2),
            Column("played by", 3),
        ],
        [
            [
                str(p.tournament.id),
                p.tournament.game,
                p.tournament.status,
                f"{p.finished}/{p.scheduled}",
                resume or "",
                f"{p.tournament.created:%Y-%m-%d %H:%M}",
                played_by(p.tournament.worker),
            ]
            for p, resume in rows
        ],
        empty="no tournaments yet; `cardshark tournament run` or `cardshark demo` makes one",
        wide=wide,
    )


def played_by(worker: str | None) -> str:
    """Who plays a tournament's matches: its pinned worker, else any worker or serve."""
    return f"worker {worker}" if worker else "any"


@tournament_app.command("status")
def tournament_status(tournament_id: int, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show one tournament's settings and progress."""
    with open_store(db) as store:
        p = store.tournament_status(tournament_id)
        entrants = [b.name for b in store.tournament_entrants(tournament_id)]
    t = p.tournament
    data = {
        "id": t.id,
        "game": t.game,
        "status": t.status,
        "options": t.options,
        "entrants": entrants,
        "rounds": t.rounds,
        "tables": t.tables,
        "move_ms": t.clock_ms,
        "bank_ms": t.bank_ms,
        "counts": p.counts,
        "finished": p.finished,
        "scheduled": p.scheduled,
        "worker": t.worker,
    }
    if as_json:
        print(json.dumps(data))
        return
    for line in status_lines(p, entrants):
        console.print(line, highlight=False, markup=False)


def status_lines(p: TournamentProgress, entrants: list[str]) -> list[str]:
    """A tournament's settings and progress in words, one line each."""
    t = p.tournament
    spec = get_game(t.game).spec
    name = f" ({t.name})" if t.name else ""
    options = ", ".join(f"{k}={v}" for k, v in sorted(t.options.items()))
    tables = "every table" if t.tables is None else f"{t.tables} tables"
    bank = "no time bank" if not t.bank_ms else f"a {t.bank_ms} ms bank per seat"
    lines = [
        f"tournament {t.id}{name}: {t.game} {t.format.replace('_', ' ')}, {t.seats} seats",
        f"entrants: {', '.join(entrants)}",
        f"schedule: {_count(t.rounds, 'round')} of {tables}; options: "
        + (f"{options} (others at the game's defaults)" if options else "the game's defaults"),
        f"clock: {t.clock_ms} ms per move"
        + (" (the game's default)" if t.clock_ms == spec.move_ms else "")
        + f", {bank}",
        f"played by: {played_by(t.worker)}",
        f"{t.status}: {_progress(p)}",
    ]
    if p.resumable:
        lines.append(f"resume with: cardshark tournament resume {t.id}")
    return lines


def _progress(p: TournamentProgress) -> str:
    others = ", ".join(
        f"{n} {status}" for status, n in p.counts.items() if n and status != "finished"
    )
    return f"{p.finished} of {_count(p.scheduled, 'match')} played" + (
        f" ({others})" if others else ""
    )


def _count(n: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{n} {noun if n == 1 else plural}"
