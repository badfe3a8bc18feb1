"""`cardshark ladder ...`: a game's ladder, played a duplicate set at a time (docs/ladder.md)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Annotated

import typer

from server.bots.house import resolve_names
from server.bots.sandbox import SandboxPolicy
from server.cli.common import (
    REMOTE_HINT,
    DbOption,
    PortOption,
    WaitOption,
    check_listen,
    command_group,
    console,
    errors,
    fail,
    open_store,
    parse_options,
    remote_port,
    require_sandbox,
)
from server.cli.ladder_progress import LadderFigures, reporter_for
from server.cli.referee_options import RefereeOptions, referee_options
from server.cli.running import bot_stopped, cancel_on_sigterm, run_with_progress
from server.cli.tables import Column, WideOption, print_table
from server.cli.tournament_show import db_flag, show_ending
from server.cli.tournaments import check_entrants, confidence_goal, play_to_the_end
from server.match.records import REMOTE_WAIT_S
from server.play.ladder import LadderPlan, LadderServer, play_ladder
from server.play.tournament import Run
from tournaments.confidence import DEFAULT_MAX_ROUNDS
from tournaments.errors import TournamentError
from tournaments.matchmaking import RULES, Rule, provisional
from tournaments.models import Match, MatchStatus, Tournament, TournamentStatus
from tournaments.ratings import Rating
from tournaments.store import LADDER, LadderEntry, Store, ranked

ladder_app = command_group("Run a game's ladder: continuous play of the tables it needs most.")


@ladder_app.command("run")
@referee_options()
def ladder_run(
    game: str,
    bots: Annotated[
        str | None, typer.Option(help="Comma-separated bot names to enter (added to its field).")
    ] = None,
    sets: Annotated[
        int | None, typer.Option(min=1, help="Play N sets, then stop (default: until stopped).")
    ] = None,
    pairing: Annotated[
        str, typer.Option(help=f"How tables are picked: {', '.join(RULES)}.")
    ] = "cardshark",
    one_per_author: Annotated[
        bool, typer.Option(help="Never seat two bots of one author at a table.")
    ] = False,
    seats: Annotated[
        int | None, typer.Option(help="Seat count, for games with several (a new ladder).")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="Game option NAME=VALUE (a new ladder; repeatable).")
    ] = None,
    move_ms: Annotated[
        int | None, typer.Option(min=1, help="Time per move (a new ladder; game default).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Master seed (a new ladder; random).")] = None,
    workers: Annotated[
        bool,
        typer.Option(
            help="Queue each set for `cardshark worker`s on PostgreSQL instead of playing it "
            "here (one scheduler per ladder)."
        ),
    ] = False,
    port: PortOption = 0,
    db: DbOption = None,
    wide: WideOption = False,
    *,
    referee: RefereeOptions,
) -> None:
    """Play the game's ladder (made on first use) until Ctrl-C, SIGTERM or --sets N; each
    set is rated at once, and a stopped ladder goes on where it was with the same command."""
    if pairing not in RULES:
        fail(f"--pairing {pairing!r}: one of {', '.join(RULES)}")
    referee.check()
    tls = referee.tls()
    names = [b.strip() for b in (bots or "").split(",") if b.strip()]
    with open_store(db, create=True) as store:
        if workers and store.engine.dialect.name != "postgresql":
            fail("a ladder on workers needs PostgreSQL (--db postgresql://...)")
        ladder = _open_ladder(store, game, seats, option or [], move_ms, seed, names)
        assert ladder.id is not None
        entered = store.enter_ladder(ladder.id, resolve_names(store, names))
        field = store.ladder_field(ladder.id)
        plan = LadderPlan(
            rule=_rule(pairing),
            one_per_author=one_per_author,
            sets=sets,
            on_idle=lambda why: console.print(why, highlight=False),
        )
        if workers:
            schedule_for_workers(store, ladder, plan)
            show_ladder(store, ladder.id, wide)
            return
        policy = referee.policy(store, check=False)
        port = _checked_port(field, policy, referee.host, port)
        console.print(
            f"ladder {ladder.id}: {ladder.game}, {ladder.seats} seats, {len(field)} bots in its "
            f"field"
            + (f" ({len(entered)} entered now)" if entered else "")
            + f", {ladder.rounds} sets so far; tables picked by {pairing}"
            + (", one bot per author" if one_per_author else ""),
            highlight=False,
        )
        server = LadderServer(
            referee.host, port, tls, policy, referee.cpu_clocks, referee.transport
        )
        _play(store, ladder.id, server, plan)
        show_ladder(store, ladder.id, wide)
        console.print(
            f"more: cardshark tournament show {ladder.id}{db_flag(db)}  (who beat whom)",
            highlight=False,
        )


def _checked_port(field: list[LadderEntry], policy: SandboxPolicy, host: str, port: int) -> int:
    """Refuse in one line a sandbox this machine cannot build (for managed bots) or a port
    taken (for remote ones); the port remote bots dial."""
    if any(e.bot.command for e in field):
        require_sandbox(policy)
    if any(not e.bot.command for e in field):
        return remote_port(host, port)
    check_listen(host, port, purpose="remote bots", zero=None, then=REMOTE_HINT)
    return port


def schedule_for_workers(store: Store, ladder: Tournament, plan: LadderPlan) -> None:
    """Feed the workers' queue with the ladder's sets until done; Ctrl-C or SIGTERM stops the
    scheduling (a set in play stays queued: the next scheduler waits for it)."""
    from server.workers.ladder_scheduler import LadderScheduler, scheduler_lock
    from server.workers.worker import ensure_queue_schema, make_app

    assert ladder.id is not None
    ladder_id = ladder.id
    url = store.engine.url.render_as_string(hide_password=False)
    stopped_by: list[str] = []

    async def main() -> None:
        cancel_on_sigterm(stopped_by)
        app = make_app(url)
        async with app.open_async():
            await ensure_queue_schema(app)
            console.print(
                f"ladder {ladder.id}: scheduling its sets for `cardshark worker --db …`",
                highlight=False,
            )
            with progress(store, ladder_id, plan) as reported:
                await LadderScheduler(store, ladder, app, reported).run()

    try:
        with scheduler_lock(store, ladder.id):
            asyncio.run(main())
    except TournamentError as exc:  # SchedulerHeld names the holder; no PostgreSQL
        fail(str(exc))
    except (KeyboardInterrupt, asyncio.CancelledError):
        how = stopped_by[0] if stopped_by else "Ctrl-C"
        open_set = store.pending_matches(ladder.id)
        kept = f"; set {open_set[0].round + 1} stays queued for the workers" if open_set else ""
        errors.print(
            f"ladder {ladder.id}: scheduling stopped by {how}{kept}; go on with: "
            f"cardshark ladder run {ladder.game} --workers",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        raise typer.Exit(143 if how == "SIGTERM" else 130) from None


def _rule(pairing: str) -> Rule:
    for rule in RULES:
        if rule == pairing:
            return rule
    raise AssertionError(pairing)


def _open_ladder(
    store: Store,
    game: str,
    seats: int | None,
    options: list[str],
    move_ms: int | None,
    seed: int | None,
    names: list[str],
) -> Tournament:
    """The game's ladder, or a new one with these settings (refused for an existing one)."""
    try:
        ladder = store.latest_ladder(game)
    except TournamentError as exc:
        fail(str(exc))
    if ladder is not None:
        given = [
            flag
            for flag, value in (
                ("--seats", seats),
                ("--option", options or None),
                ("--move-ms", move_ms),
                ("--seed", seed),
            )
            if value is not None
        ]
        if given:
            fail(
                f"ladder {ladder.id} of {game} exists; {', '.join(given)} are set when a ladder "
                "is made and cannot change"
            )
        return ladder
    return store.create_tournament(
        game,
        resolve_names(store, names),
        seats=seats,
        options=parse_options(options),
        seed=seed,
        clock_ms=move_ms,
        format=LADDER,
        name=f"{game} ladder",
    )


@contextmanager
def progress(store: Store, ladder_id: int, plan: LadderPlan) -> Iterator[LadderPlan]:
    """The plan with its sets reported as `tournament run` reports matches (a bar on a
    terminal, plain lines elsewhere); however the run stops, one line then says what it
    played."""
    figures = LadderFigures.of(store, ladder_id, plan.sets)
    reporter = reporter_for(figures)
    try:
        yield replace(plan, on_set=reporter.update)
    finally:
        reporter.close()
        errors.print(
            f"ladder {ladder_id}: {figures.summary()}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


def _play(store: Store, ladder_id: int, server: LadderServer, plan: LadderPlan) -> None:
    """Play until done; Ctrl-C or SIGTERM stops it between or during sets, resumably."""
    stopped_by: list[str] = []

    async def main() -> None:
        cancel_on_sigterm(stopped_by)
        run = Run(2, None, None, None, True, bot_stopped)
        with progress(store, ladder_id, plan) as reported:
            await play_ladder(store, ladder_id, server, run, reported)

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        how = stopped_by[0] if stopped_by else "Ctrl-C"
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        open_set = store.pending_matches(ladder_id)
        ladder = store.get_tournament(ladder_id)
        if open_set:
            store.set_tournament_status(ladder_id, TournamentStatus.INTERRUPTED)
        unfinished = (
            f"; set {open_set[0].round + 1} was in play: its {len(open_set)} unfinished "
            "match(es) are played first when it goes on"
            if open_set
            else "; no set was in play"
        )
        errors.print(
            f"ladder {ladder_id} stopped by {how} with {ladder.rounds} sets{unfinished}; "
            f"go on with: cardshark ladder run {ladder.game}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        raise typer.Exit(143 if how == "SIGTERM" else 130) from None


def show_ladder(store: Store, ladder_id: int, wide: bool = False) -> None:
    """The ladder's field ranked by μ − 3σ, provisional bots marked."""
    ladder = store.get_tournament(ladder_id)
    field = ranked(store.ladder_field(ladder_id))
    rows = [
        [
            str(rank),
            e.bot.name + (" (provisional)" if provisional(Rating(e.mu, e.sigma)) else ""),
            e.author,
            f"{e.mu:.2f}",
            f"{e.sigma:.2f}",
            f"{e.conservative:.2f}",
            str(e.sets),
        ]
        for rank, e in enumerate(field, start=1)
    ]
    print_table(
        f"Ladder {ladder_id}: {ladder.game}, {ladder.rounds} sets",
        [
            Column("rank", justify="right"),
            Column("bot"),
            Column("author", 2),
            Column("μ", 1, "right"),
            Column("σ", 3, "right"),
            Column("μ−3σ", justify="right"),
            Column("sets", justify="right"),
        ],
        rows,
        empty="no bots in the ladder's field: enter some with --bots, or accept a submission",
        wide=wide,
    )


@ladder_app.command("status")
def ladder_status(game: str, db: DbOption = None, wide: WideOption = False) -> None:
    """The game's ladder: sets played and in play, its field, who is provisional, and the
    last error a run of it met."""
    with open_store(db) as store:
        ladder = store.latest_ladder(game)
        if ladder is None or ladder.id is None:
            fail(f"no ladder of {game} yet; start one with: cardshark ladder run {game} --bots ...")
        progress = store.tournament_status(ladder.id)
        field = store.ladder_field(ladder.id)
        waiting = sum(1 for e in field if provisional(Rating(e.mu, e.sigma)))
        in_play = len({m.round for m in store.pending_matches(ladder.id)})
        matches = store.matches(ladder.id)
        finished = [m.finished for m in matches if m.finished is not None]
        console.print(
            f"ladder {ladder.id}: {ladder.game}, {'a set in play' if in_play else 'idle'}; "
            f"{ladder.rounds} sets "
            f"({in_play} in play), {progress.finished} matches finished"
            + (f", the last at {max(finished):%Y-%m-%d %H:%M:%S} UTC" if finished else "")
            + f"; {len(field)} bots in its field, {waiting} provisional",
            highlight=False,
        )
        from server.workers.ladder_scheduler import scheduler_holder

        holder = scheduler_holder(store, ladder.id)
        if holder is not None:
            console.print(f"scheduled for workers by {holder}", highlight=False)
        error = store.last_ladder_error(ladder.id)
        console.print(
            "last error: "
            + (
                f"{error.at:%Y-%m-%d %H:%M:%S} UTC "
                f"({_sets_since(matches, error.at)} since): {error.message}"
                if error
                else "none"
            ),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        show_ladder(store, ladder.id, wide)


def _sets_since(matches: Sequence[Match], at: datetime) -> str:
    """How many sets were completed after `at`, as words: whether an error is still news."""
    ends: dict[int, datetime | None] = {}
    for m in matches:
        if m.status == MatchStatus.VOIDED:
            continue
        last = ends.get(m.round, m.finished)
        ends[m.round] = None if m.finished is None or last is None else max(last, m.finished)
    n = sum(1 for end in ends.values() if end is not None and end > at)
    return "no set completed" if n == 0 else f"{n} set{'s' if n > 1 else ''} completed"


@ladder_app.command("add")
def ladder_add(
    game: str,
    bots: Annotated[str, typer.Argument(help="Comma-separated bot names.")],
    db: DbOption = None,
) -> None:
    """Enter bots in the game's ladder; a running ladder seats them from its next pick."""
    names = [b.strip() for b in bots.split(",") if b.strip()]
    with open_store(db) as store:
        ladder = store.latest_ladder(game)
        if ladder is None or ladder.id is None:
            fail(f"no ladder of {game} yet; start one with: cardshark ladder run {game} --bots ...")
        entered = store.enter_ladder(ladder.id, resolve_names(store, names))
        already = [n for n in names if n not in {b.name for b in entered}]
        console.print(
            f"ladder {ladder.id}: entered {', '.join(b.name for b in entered) or 'none'}"
            + (f"; already in: {', '.join(already)}" if already else ""),
            highlight=False,
        )


@ladder_app.command("final")
@referee_options()
def ladder_final(
    game: str,
    top: Annotated[int, typer.Option(min=2, help="How many of the ladder's best play it.")] = 8,
    until_confident: Annotated[
        float,
        typer.Option(
            metavar="P",
            help="Add rounds until every neighbour pair is separated at confidence P.",
        ),
    ] = 0.95,
    max_rounds: Annotated[
        int | None,
        typer.Option(min=1, help=f"At most N rounds (default {DEFAULT_MAX_ROUNDS})."),
    ] = None,
    tables: Annotated[
        int | None, typer.Option(min=1, help="A round is a balanced subset of N tables.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Matches at once (default: two per core).")
    ] = None,
    port: PortOption = 0,
    wait_s: WaitOption = REMOTE_WAIT_S,
    db: DbOption = None,
    *,
    referee: RefereeOptions,
) -> None:
    """Freeze the ladder's top K by μ − 3σ and play them a duplicate round robin that adds
    rounds until every neighbour pair is separated at P; pairs left unresolved are named."""
    goal = confidence_goal(until_confident, max_rounds, 1)
    assert goal is not None
    referee.check()
    tls = referee.tls()
    with open_store(db) as store:
        ladder = store.latest_ladder(game)
        if ladder is None or ladder.id is None:
            fail(f"no ladder of {game} yet; start one with: cardshark ladder run {game} --bots ...")
        order = ranked(store.ladder_field(ladder.id))
        if len(order) < max(top, ladder.seats):
            fail(
                f"ladder {ladder.id} has {len(order)} bots in its field: a final of --top {top} "
                f"needs {max(top, ladder.seats)}"
            )
        names = [e.bot.name for e in order[:top]]
        policy = referee.policy(store, check=False)
        check_entrants(store, names, policy, referee.host, port)
        final = store.create_tournament(
            game,
            names,
            seats=ladder.seats,
            options=ladder.options,
            tables=tables,
            clock_ms=ladder.clock_ms,
            bank_ms=ladder.bank_ms,
            name=f"{game} ladder {ladder.id} final",
        )
        assert final.id is not None
        store.set_goal(final.id, goal)
        console.print(
            f"final of ladder {ladder.id}: tournament {final.id}, its top {top} frozen: "
            + ", ".join(names),
            highlight=False,
        )
        args = (store, final.id, referee, tls, policy, concurrency, port, False, wait_s)
        play_to_the_end(store, final.id, partial(run_with_progress, *args))
        show_ending(store, final.id, db)
