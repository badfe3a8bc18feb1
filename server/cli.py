"""The cardshark command: serve, bots, tournaments, rankings, matches, games and a demo."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from games.errors import GameError
from games.registry import all_games, get_game
from server.clocks import CLOCK_KINDS
from server.load import concurrency_warning, fitting_concurrency
from server.sandbox import (
    NO_SANDBOX,
    BotLimits,
    SandboxError,
    SandboxPolicy,
    unavailable_reason,
)
from server.tls import TlsConfig, TlsFileError, load_tls, plain_tcp_warning
from server.transcript import seat_names, transcript
from tournaments.errors import TournamentError
from tournaments.store import Store

T = TypeVar("T")
console = Console()
errors = Console(stderr=True)
app = typer.Typer(
    help="cardshark: a tournament server for card-game bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
bot_app = typer.Typer(help="Register and list bots.", no_args_is_help=True)
tournament_app = typer.Typer(help="Run and inspect tournaments.", no_args_is_help=True)
ratings_app = typer.Typer(help="Maintain ratings.", no_args_is_help=True)
match_app = typer.Typer(help="Inspect matches.", no_args_is_help=True)
app.add_typer(bot_app, name="bot")
app.add_typer(tournament_app, name="tournament")
app.add_typer(ratings_app, name="ratings")
app.add_typer(match_app, name="match")

EXAMPLES = Path(__file__).resolve().parents[1] / "clients" / "python" / "examples"
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", envvar="CARDSHARK_DB", help="SQLAlchemy URL (default sqlite:///./cardshark.db)."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
SandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="How managed bots are confined: bwrap (namespaces, own uid, limits) or none.",
    ),
]
ClockOption = Annotated[
    str,
    typer.Option(
        "--clock",
        help="cpu: a sandboxed managed bot is timed by the CPU it used (fair under load); "
        "wall: by wall time less the server's own lag (always so for remote bots).",
    ),
]
BotMemoryOption = Annotated[
    int, typer.Option("--bot-memory", min=0, help="Memory per managed bot in MiB (0: no cap).")
]
BotCpuOption = Annotated[
    int, typer.Option("--bot-cpu", min=0, help="CPU seconds per managed bot process (0: no cap).")
]
BotPidsOption = Annotated[
    int, typer.Option("--bot-pids", min=0, help="Processes per managed bot (0: no cap).")
]
TlsCertOption = Annotated[
    Path | None,
    typer.Option("--tls-cert", help="PEM certificate chain: serve bots over TLS (with --tls-key)."),
]
TlsKeyOption = Annotated[
    Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")
]
TlsClientCaOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-client-ca", help="PEM CA: mutual TLS, bots must present a certificate it signed."
    ),
]


def fail(message: str) -> NoReturn:
    """Print one clear line and exit non-zero."""
    errors.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def tls_options(
    host: str, cert: Path | None, key: Path | None, client_ca: Path | None
) -> TlsConfig | None:
    """The TLS files read and checked (one error line naming a bad one); warns on plain TCP."""
    try:
        tls = load_tls(cert, key, client_ca)
    except TlsFileError as exc:
        fail(str(exc))
    warning = plain_tcp_warning(host, tls)
    if warning is not None:
        errors.print(f"[bold yellow]{warning}[/]", highlight=False, soft_wrap=True)
    return tls


def sandbox_policy(
    kind: str,
    memory_mb: int,
    cpu_s: int,
    pids: int,
    store: Store | None = None,
    log_dir: Path | None = None,
    check: bool = True,
) -> SandboxPolicy:
    """The managed bots' sandbox, checked on this machine: one line and exit 2 if it cannot be."""
    try:
        forbidden = [os.getcwd(), str(log_dir or "logs")]
        if store is not None and store.url.startswith("sqlite:///"):
            forbidden.append(store.url.removeprefix("sqlite:///"))
        policy = SandboxPolicy(
            kind,
            BotLimits(memory_mb=memory_mb, cpu_s=cpu_s, pids=pids),
            forbidden=tuple(forbidden),
        )
    except SandboxError as exc:
        fail(str(exc))
    if not policy.on:
        errors.print(
            "[bold yellow]warning: --sandbox none: managed bots run unsandboxed, as this user, "
            "with its files and network[/]",
            highlight=False,
            soft_wrap=True,
        )
    elif check:
        require_sandbox(policy)
    return policy


def check_clock(clock: str) -> None:
    """Refuse an unknown --clock in one line that names the allowed ones."""
    if clock not in CLOCK_KINDS:
        fail(f"unknown --clock {clock!r}; allowed: {', '.join(CLOCK_KINDS)}")


def require_sandbox(policy: SandboxPolicy) -> None:
    """Refuse in one line when the policy asks for a sandbox this machine cannot build."""
    if policy.on and (why := unavailable_reason()) is not None:
        fail(f"cannot sandbox managed bots: {why}; or run them unsandboxed with --sandbox none")


@contextmanager
def clear_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one line and exit code 2."""
    try:
        yield
    except (GameError, TournamentError, SandboxError) as exc:
        fail(str(exc))
    except OSError as exc:  # e.g. the referee's port is taken
        fail(str(exc))
    except KeyboardInterrupt:
        errors.print("interrupted; finished matches are saved (resume with `tournament resume`)")
        raise typer.Exit(130) from None


@contextmanager
def open_store(db: str | None) -> Iterator[Store]:
    """The database, with its errors as one line."""
    with clear_errors():
        store = Store(db)
        try:
            yield store
        finally:
            store.close()


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`name=value` pairs with true/false and integers typed."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            fail(f"bad --option {pair!r}; expected NAME=VALUE, e.g. target=15")
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        out[name] = value
    return out


# -- games -------------------------------------------------------------------------------


@app.command("games")
def games_command(as_json: JsonOption = False) -> None:
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
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="Games")
    for column in ("game", "seats", "options (default)"):
        table.add_column(column)
    for row in rows:
        opts = ", ".join(f"{o['name']}={o['default']}" for o in row["options"]) or "-"
        seats = ", ".join(str(s) for s in row["seats"])
        table.add_row(row["name"], seats, opts)
    console.print(table)


# -- bots --------------------------------------------------------------------------------


@bot_app.command("add")
def bot_add(
    name: str,
    command: Annotated[
        str | None, typer.Option(help="Command that starts the bot (managed).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a bot and print its token (shown only this once)."""
    with open_store(db) as store:
        bot, token = store.add_bot(name, command)
    if as_json:
        print(json.dumps({"id": bot.id, "name": bot.name, "token": token}))
        return
    console.print(f"bot [bold]{bot.name}[/] registered (id {bot.id})")
    console.print(f"token: {token}", highlight=False, soft_wrap=True)
    console.print("Keep it safe: it is stored only as a hash and cannot be shown again.")


@bot_app.command("list")
def bot_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List registered bots."""
    with open_store(db) as store:
        bots = store.list_bots()
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": b.id,
                        "name": b.name,
                        "command": b.command,
                        "created": b.created.isoformat(),
                    }
                    for b in bots
                ],
                indent=2,
            )
        )
        return
    table = Table(title="Bots")
    for column in ("id", "name", "command", "created"):
        table.add_column(column)
    for b in bots:
        table.add_row(str(b.id), b.name, b.command or "(remote)", f"{b.created:%Y-%m-%d %H:%M}")
    console.print(table)


@bot_app.command("remove")
def bot_remove(name: str, db: DbOption = None) -> None:
    """Remove a bot (one with matches is retired: kept for history, hidden from rankings)."""
    with open_store(db) as store:
        how = store.remove_bot(name)
    console.print(f"bot {name} {how}")


# -- tournaments ---------------------------------------------------------------------------


def run_with_progress(
    store: Store,
    tournament_id: int,
    concurrency: int | None,
    port: int,
    host: str = "127.0.0.1",
    tls: TlsConfig | None = None,
    sandbox: SandboxPolicy = NO_SANDBOX,
    clock: str = "cpu",
) -> None:
    """Play a tournament's unfinished matches with a live progress bar."""
    check_clock(clock)
    from server.tournament_runner import Progress as RunProgress
    from server.tournament_runner import run_tournament

    status = store.tournament_status(tournament_id)
    pending = store.pending_matches(tournament_id)
    seats = len(pending[0].seats) if pending else 0
    concurrency = concurrency or fitting_concurrency()
    if (warning := concurrency_warning(concurrency, seats)) is not None:
        errors.print(f"[bold yellow]{warning}[/]", highlight=False, soft_wrap=True)
    if any(b.command for b in store.tournament_entrants(tournament_id)):
        require_sandbox(sandbox)
    remote = [b.name for b in store.tournament_entrants(tournament_id) if not b.command]
    if remote:
        port = port or 50051  # remote bots need an address they can know in advance
        console.print(
            f"remote bots {', '.join(remote)}: start them with --server {host}:{port} "
            + ("--tls-ca CA " if tls else "")
            + "and their tokens (no-show after 10 s)"
        )
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("matches"),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[flight]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(
            f"tournament {tournament_id}",
            total=status.scheduled,
            completed=status.finished,
            rate="",
            flight=f"at once ≤{concurrency}",
        )
        started = None
        voided_for_load = 0

        def update(p: RunProgress) -> None:
            nonlocal started, voided_for_load
            import time

            now = time.monotonic()
            started = started or now
            done_here = max(1, p.done - status.finished)
            rate = done_here / max(now - started, 1e-6) if now > started else 0.0
            # The limit shows when the runner lowers it under load.
            flight = f"at once {p.in_flight}/{p.limit}" + (
                f" (of {concurrency})" if p.limit < concurrency else ""
            )
            voided_for_load = p.load_voids
            bar.update(
                task, completed=p.done, rate=f"{rate:.2f}/s" if rate else "", flight=flight
            )

        asyncio.run(
            run_tournament(
                store,
                tournament_id,
                concurrency=concurrency,
                port=port,
                host=host,
                on_progress=update,
                tls=tls,
                sandbox=sandbox,
                cpu_clocks=clock == "cpu",
            )
        )
    if voided_for_load:
        errors.print(
            f"[bold yellow]{voided_for_load} match(es) voided for the server's load "
            "(timeouts of several bots at once) and replayed: never rated[/]",
            highlight=False,
            soft_wrap=True,
        )


@tournament_app.command("run")
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
    port: Annotated[int, typer.Option(help="Port remote bots dial (0: any free port).")] = 0,
    host: Annotated[str, typer.Option(help="Interface to listen on (0.0.0.0: all).")] = "127.0.0.1",
    create_only: Annotated[
        bool, typer.Option(help="Store it and its schedule; play later with `resume ID`.")
    ] = False,
    gauntlet: Annotated[
        bool, typer.Option(help="The first bot meets the field at every table (no round robin).")
    ] = False,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    tls_client_ca: TlsClientCaOption = None,
    sandbox: SandboxOption = "bwrap",
    bot_memory: BotMemoryOption = 1024,
    bot_cpu: BotCpuOption = 0,
    bot_pids: BotPidsOption = 64,
    clock: ClockOption = "cpu",
    db: DbOption = None,
) -> None:
    """Create a round robin (or gauntlet), play it with a progress bar, show the rankings."""
    names = [b.strip() for b in bots.split(",") if b.strip()]
    check_clock(clock)
    tls = tls_options(host, tls_cert, tls_key, tls_client_ca)
    with open_store(db) as store:
        policy = sandbox_policy(sandbox, bot_memory, bot_cpu, bot_pids, store, check=False)
        managed = [b.name for b in store.list_bots() if b.command and b.name in names]
        if managed and not create_only:
            require_sandbox(policy)  # before anything is stored
        tournament = store.create_tournament(
            game,
            names,
            seats=seats,
            options=parse_options(option or []),
            rounds=rounds,
            tables=tables,
            seed=seed,
            clock_ms=move_ms,
            bank_ms=bank_ms,
            format="gauntlet" if gauntlet else "round_robin",
        )
        assert tournament.id is not None
        scheduled = store.tournament_status(tournament.id).scheduled
        console.print(f"tournament {tournament.id}: {game}, {len(names)} bots, {scheduled} matches")
        if create_only:
            console.print(f"play it with: cardshark tournament resume {tournament.id}")
            return
        run_with_progress(store, tournament.id, concurrency, port, host, tls, policy, clock)
        show_rankings(store, tournament.game)


@tournament_app.command("resume")
def tournament_resume(
    tournament_id: int,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Matches at once (default: two per core).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port remote bots dial (0: any free port).")] = 0,
    host: Annotated[str, typer.Option(help="Interface to listen on (0.0.0.0: all).")] = "127.0.0.1",
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    tls_client_ca: TlsClientCaOption = None,
    sandbox: SandboxOption = "bwrap",
    bot_memory: BotMemoryOption = 1024,
    bot_cpu: BotCpuOption = 0,
    bot_pids: BotPidsOption = 64,
    clock: ClockOption = "cpu",
    db: DbOption = None,
) -> None:
    """Play whatever a stopped tournament left unfinished, then show the rankings."""
    tls = tls_options(host, tls_cert, tls_key, tls_client_ca)
    with open_store(db) as store:
        tournament = store.get_tournament(tournament_id)
        policy = sandbox_policy(sandbox, bot_memory, bot_cpu, bot_pids, store, check=False)
        run_with_progress(store, tournament_id, concurrency, port, host, tls, policy, clock)
        show_rankings(store, tournament.game)


@tournament_app.command("list")
def tournament_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List tournaments."""
    with open_store(db) as store:
        rows = [(t, store.tournament_status(t.id)) for t in store.list_tournaments() if t.id]
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": t.id,
                        "game": t.game,
                        "status": t.status,
                        "finished": p.finished,
                        "scheduled": p.scheduled,
                    }
                    for t, p in rows
                ]
            )
        )
        return
    table = Table(title="Tournaments")
    for column in ("id", "game", "status", "matches", "created"):
        table.add_column(column)
    for t, p in rows:
        table.add_row(
            str(t.id),
            t.game,
            t.status,
            f"{p.finished}/{p.scheduled}",
            f"{t.created:%Y-%m-%d %H:%M}",
        )
    console.print(table)


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
    }
    if as_json:
        print(json.dumps(data))
        return
    for key, value in data.items():
        console.print(f"[bold]{key}[/]: {value}", highlight=False)


# -- rankings, ratings, matches -------------------------------------------------------------


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
    for tid, count in sorted(store.load_voids(game).items()):
        console.print(
            f"tournament {tid}: {count} match(es) voided for the server's load and replayed "
            "(never rated)",
            highlight=False,
        )


@app.command("rankings")
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


@match_app.command("show")
def match_show(match_id: int, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show a match as a readable transcript."""
    with open_store(db) as store:
        detail = store.match_detail(match_id)
    match, record = detail.match, detail.match.record or {}
    if as_json:
        print(
            json.dumps(
                {"id": match.id, "status": match.status, "result": match.result, "record": record},
                indent=2,
            )
        )
        return
    names = seat_names(detail)
    console.print(
        f"[bold]match {match.id}[/] of tournament {match.tournament_id}: "
        f"{detail.tournament.game}, seed {match.seed}, status {match.status}"
    )
    for seat, name in enumerate(names):
        console.print(f"  seat {seat}: {name}")
    for step in transcript(detail):
        who = f"seat {step.seat} {step.bot}"
        console.print(
            f"  {step.index:4d}  {who:<24} {step.action:<26} {step.ms:8.1f} ms", highlight=False
        )
        for f in step.faults:
            console.print(
                f"        [red]fault {f['kind']} (seat {f['seat']}): {f['detail']}; "
                f"played {f['fallback'] or '-'}[/]",
                highlight=False,
            )
        if step.hand_ended is not None:
            console.print(f"  [bold]hand {step.hand_ended} ended[/]: scores {step.scores}")
    if match.result:
        console.print(f"scores {match.result.get('scores')}  ranks {match.result.get('ranks')}")


@match_app.command("replay")
def match_replay(match_id: int, db: DbOption = None) -> None:
    """Replay a stored match through its engine and check it reaches the stored result."""
    with open_store(db) as store:
        detail = store.match_detail(match_id)
    match = detail.match
    if match.status != "finished" or not match.record or not match.result:
        fail(f"match {match_id} is {match.status}; only finished matches can be replayed")
    game = get_game(detail.tournament.game)
    actions = match.record["actions"]
    try:
        state = game.replay(match.seed, len(match.seats), detail.tournament.options, actions)
    except GameError as exc:
        fail(f"match {match_id} does not replay: {exc}")
    scores = [float(s) for s in game.result(state).scores]
    if not game.is_over(state) or scores != match.result["scores"]:
        fail(f"match {match_id} replays to {scores}, but {match.result['scores']} is stored")
    console.print(f"match {match_id}: {len(actions)} actions replay to the stored scores {scores}")


# -- serve, demo ------------------------------------------------------------------------------


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 50051,
    admin_token: Annotated[
        str | None,
        typer.Option(
            envvar="CARDSHARK_ADMIN_TOKEN",
            help="Enables the Admin service; set the variable rather than the flag (ps shows it).",
        ),
    ] = None,
    admin_token_file: Annotated[
        Path | None,
        typer.Option(help="Enables the Admin service with the token in this file (mode 0600)."),
    ] = None,
    log_dir: Annotated[Path, typer.Option(help="Where managed bots' stderr goes.")] = Path("logs"),
    web_port: Annotated[
        int, typer.Option(help="Port of the web page (leaderboards, replays); 0 turns it off.")
    ] = 8080,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    tls_client_ca: TlsClientCaOption = None,
    sandbox: SandboxOption = "bwrap",
    bot_memory: BotMemoryOption = 1024,
    bot_cpu: BotCpuOption = 0,
    bot_pids: BotPidsOption = 64,
    clock: ClockOption = "cpu",
    db: DbOption = None,
) -> None:
    """Run the referee for bots, the Admin service for tools and the web page for people."""
    check_clock(clock)
    tls = tls_options(host, tls_cert, tls_key, tls_client_ca)
    web_tls = (tls_cert, tls_key) if tls_cert and tls_key else None
    from server.admin import AdminService, AdminTokenError, admin_token_source
    from server.arena import Arena
    from server.tournament_runner import database_authenticator

    try:
        admin_token, token_warning = admin_token_source(admin_token, admin_token_file, sys.argv)
    except AdminTokenError as exc:
        fail(str(exc))
    if token_warning is not None:
        errors.print(f"[bold yellow]{token_warning}[/]", highlight=False, soft_wrap=True)

    async def main() -> None:
        arena = Arena(
            log_dir,
            host,
            port,
            database_authenticator(store),
            tls=tls,
            sandbox=policy,
            cpu_clocks=clock == "cpu",
        )
        arena.services.append(AdminService(store, arena, admin_token).add_to)
        async with arena:
            admin = "on" if admin_token else "off (no CARDSHARK_ADMIN_TOKEN or --admin-token-file)"
            over = "mutual TLS" if tls and tls.mutual else "TLS" if tls else "plain TCP"
            console.print(f"cardshark serving on {arena.address} ({over}); admin service {admin}")
            web = await start_web(store, host, web_port, web_tls) if web_port else None
            if web is not None:
                scheme = "https" if web_tls else "http"
                console.print(f"web page on {scheme}://{host}:{web_port}/")
            assert arena.running is not None
            try:
                await arena.running.server.wait_for_termination()
            finally:
                if web is not None:
                    web.should_exit = True

    with open_store(db) as store:
        policy = sandbox_policy(sandbox, bot_memory, bot_cpu, bot_pids, store, log_dir)
        try:
            asyncio.run(main())
        except OSError as exc:
            fail(f"cannot serve on {host}:{port}: {exc}")
        except KeyboardInterrupt:
            console.print("stopped")


async def start_web(
    store: Store, host: str, port: int, tls_files: tuple[Path, Path] | None = None
) -> Any:
    """Serve the web page from this event loop (HTTPS with tls_files); returns the server."""
    import socket

    import uvicorn

    from server.web import make_app

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # Ctrl-C belongs to the referee, which stops everything in order

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot bind the web page to {host}:{port}: {exc.strerror}") from None
    cert, key = tls_files or (None, None)
    config = uvicorn.Config(
        make_app(store), log_level="warning", ssl_certfile=cert, ssl_keyfile=key
    )
    try:
        config.load()  # a certificate uvicorn cannot use fails here, not in the task
    except OSError:
        sock.close()
        raise
    server = Server(config)
    asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    return server


def demo_bots(game: str, seats: int) -> dict[str, str]:
    """The demo's entrants: the game's rule-following example bot and one random bot per seat."""
    bots = {f"demo-rules-{game}": f"{game.replace('-', '_')}_bot.py"}
    bots.update({f"demo-random-{i}": "random_bot.py" for i in range(1, seats + 1)})
    return bots


@app.command("demo")
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
    db: DbOption = None,
) -> None:
    """A round robin of the example bots (rules vs random) on the embedded SQLite default."""
    if sandbox == "auto":  # the demo's bots are our own examples: no sandbox tool is no reason
        sandbox = "bwrap" if unavailable_reason() is None else "none"
    with open_store(db) as store:
        policy = sandbox_policy(sandbox, 1024, 0, 64, store, check=False)
        spec = get_game(game).spec
        entrants = demo_bots(spec.name, spec.default_seats)
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
        run_with_progress(store, tournament.id, concurrency, 0, sandbox=policy)
        show_rankings(store, spec.name)


@app.command(
    "bridge",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def bridge(ctx: typer.Context) -> None:
    """Play a bot without gRPC: cardshark bridge [--server S] [--token T] -- COMMAND...

    The bot process speaks JSON lines (protobuf's JSON mapping) on stdin/stdout.
    """
    from cardshark_bot.bridge import bridge_main

    raise typer.Exit(bridge_main(list(ctx.args)))


def main() -> None:
    """Entry point of the cardshark command."""
    # gRPC logs its own copy of errors we report in one line; GRPC_VERBOSITY=ERROR brings it back
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    if sys.argv[1:2] == ["bridge"]:
        from cardshark_bot.bridge import bridge_main

        # argv as typed, "--" included, so the bot's own options never reach click
        raise SystemExit(bridge_main(sys.argv[2:]))
    app()


if __name__ == "__main__":
    main()
