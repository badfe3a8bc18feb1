"""`cardshark worker` and `cardshark tournament create`: matches played by workers.

server.workers.worker is imported where it is used: procrastinate needs psycopg, which only the
`postgres` extra installs, and the rest of the command must work without it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from server.bots.cpu_pin import AUTO, CpuChoiceError, CpuClaim, claim_cpu, parse_cpu, pin_process
from server.bots.house import resolve_names
from server.bots.sandbox import SandboxPolicy
from server.cli.common import (
    DbOption,
    check_listen,
    clear_errors,
    console,
    fail,
    log_directory,
    open_store,
    optional_port,
)
from server.cli.referee_options import RefereeOptions, referee_options
from server.cli.schedule import Schedule
from server.transport.tls import TlsConfig
from tournaments.models import Tournament

if TYPE_CHECKING:
    from server.workers.worker import WorkerSettings


@referee_options(play=False)
def worker(
    db: DbOption = None,
    name: Annotated[str | None, typer.Option(help="Worker name (default: HOST-PID).")] = None,
    log_dir: Annotated[Path, typer.Option(help="Where bot logs go.")] = Path("logs"),
    heartbeat: Annotated[
        float, typer.Option(min=0.1, help="Seconds between this worker's heartbeats.")
    ] = 10.0,
    stalled_after: Annotated[
        float,
        typer.Option(
            min=0.2, help="A worker silent this many seconds is dead: its match is replayed."
        ),
    ] = 30.0,
    until_empty: Annotated[
        bool, typer.Option(help="Stop when no match is left in the queue.")
    ] = False,
    bot_cache: Annotated[
        Path | None,
        typer.Option(
            envvar="CARDSHARK_BOT_CACHE",
            help="Where bots stored with `bot add --dir` are unpacked, once per digest "
            "(default ~/.cache/cardshark/bots).",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            callback=optional_port,
            help="Port remote bots dial, for tournaments created with --worker NAME "
            "(0: any free port; default: none, remote bots cannot connect).",
        ),
    ] = None,
    cpu: Annotated[
        str,
        typer.Option(
            "--cpu",
            metavar="auto|none|N",
            help="Run this worker and its bots on one core: auto (a core no other worker of "
            "this user on this machine holds; none left, or one core: unpinned), none, or "
            "core N.",
        ),
    ] = "auto",
    *,
    referee: RefereeOptions,
) -> None:
    """Play queued matches of any tournament in a shared PostgreSQL database (and those
    created with --worker NAME, this worker's name), with managed bots started here and, with
    --port, remote bots connected here; SIGTERM finishes the match in play, then stops."""
    from server.workers.worker import WorkerSettings, conninfo, default_name

    with clear_errors():
        conninfo(db)  # refuses a database that is not PostgreSQL, in one line
    try:
        cpu_choice = parse_cpu(cpu)
    except CpuChoiceError as err:
        fail(str(err))
    referee.check()
    if stalled_after <= heartbeat:
        fail(f"--stalled-after {stalled_after} must be longer than --heartbeat {heartbeat}")
    tls = remote_tls(referee, port)
    with open_store(db) as store:  # the schema check, and a clear line for a bad URL
        policy = referee.policy(store, log_dir)
        log_directory(log_dir)
        if bot_cache is not None:
            policy = replace(policy, code_cache=str(bot_cache.expanduser().resolve()))
        url = store.engine.url.render_as_string(hide_password=False)
    settings = WorkerSettings(
        name or default_name(), log_dir, heartbeat, stalled_after, until_empty=until_empty,
        host=referee.host, port=port, tls=tls,
    )  # fmt: skip
    WorkerPlan(url, settings, policy, cpu, cpu_choice).run()


def remote_tls(referee: RefereeOptions, port: int | None) -> TlsConfig | None:
    """The TLS remote bots connect with, if a --port lets them connect; TLS files without a
    port are refused in one line."""
    if port is None:
        if referee.tls_given:
            fail("--tls-cert, --tls-key and --tls-client-ca serve remote bots: give --port too")
        return None
    check_listen(referee.host, port)
    return referee.tls()


@dataclass(frozen=True)
class WorkerPlan:
    """What `worker` runs, checked: the queue's database, its settings, the bots' sandbox and
    the core it asked for."""

    url: str
    settings: WorkerSettings
    policy: SandboxPolicy
    cpu: str  # as given, for its error line
    cpu_choice: str | int

    def run(self) -> None:
        """Claim the core, pin to it, play queued matches until stopped; say how many."""
        from server.workers.worker import run_worker

        name = self.settings.name
        try:
            claim = claim_cpu(self.cpu_choice)
        except (CpuChoiceError, OSError) as err:
            fail(f"--cpu {self.cpu}: {err}")
        console.print(f"worker {name}: {pinned_line(self.cpu_choice, claim)}", highlight=False)
        if claim is not None:
            pin_process(claim.cpu)  # before the loop starts threads or bots: they inherit it
        with clear_errors():
            played = asyncio.run(run_worker(self.url, self.settings, self.policy, self.listening))
        console.print(f"worker {name}: {played} matches played", highlight=False)

    def listening(self, address: str) -> None:
        """Say where remote bots dial this worker."""
        console.print(f"worker {self.settings.name}: remote bots dial {address}", highlight=False)


def pinned_line(choice: str | int, claim: CpuClaim | None) -> str:
    """What a worker says of its core at start."""
    if claim is None:
        if choice == AUTO:
            return "not pinned to a core (one core only, or every core is another worker's)"
        return "not pinned to a core (--cpu none)"
    shared = " (another worker holds it too)" if claim.shared else ""
    return f"pinned to CPU {claim.cpu} with its bots{shared}"


def tournament_create(
    game: str,
    bots: Annotated[str, typer.Option(help="Comma-separated bot names (at least the seat count).")],
    rounds: Annotated[
        int, typer.Option(min=1, help="Repeat the round robin with fresh seeds.")
    ] = 1,
    tables: Annotated[
        int | None, typer.Option(min=1, help="Play a balanced subset of N tables.")
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
    gauntlet: Annotated[
        bool, typer.Option(help="The first bot meets the field at every table (no round robin).")
    ] = False,
    worker: Annotated[
        str | None,
        typer.Option(
            "--worker",
            help="Only the worker of this --name plays it: needed when a bot is remote "
            "(it connects to that worker's --port).",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Store a tournament and its schedule; on PostgreSQL queue every match for
    `cardshark worker` processes (elsewhere: play it with `tournament resume ID`)."""
    names = [b.strip() for b in bots.split(",") if b.strip()]
    if worker is not None and not worker.strip():
        fail("--worker needs a worker's name (its --name)")
    schedule = Schedule(game, rounds, tables, move_ms, bank_ms, seats, option or [], seed, gauntlet)
    with open_store(db, create=True) as store:
        names = resolve_names(store, names)
        shared = store.engine.dialect.name == "postgresql"
        if worker is not None and not shared:
            fail("--worker names a worker, and workers share a PostgreSQL database; give --db")
        remote = [b.name for b in store.list_bots() if b.name in names and not b.command]
        if shared and remote and worker is None:
            fail(
                f"{'bots' if len(remote) > 1 else 'bot'} {', '.join(map(repr, remote))} "
                f"{'are' if len(remote) > 1 else 'is'} remote (no --command): give --worker "
                "NAME, the worker they connect to (`cardshark worker --name NAME --port P`)"
            )
        tournament = schedule.create(store, names, worker)
        tid = tournament.id
        assert tid is not None
        indices = [m.schedule_index for m in store.pending_matches(tid)]
        url = store.engine.url.render_as_string(hide_password=False)
    console.print(f"tournament {tid}: {game}, {len(names)} bots, {len(indices)} matches")
    if not shared:
        console.print(f"play it with: cardshark tournament resume {tid}")
        return
    with clear_errors():
        queued = asyncio.run(_queue(url, tournament, indices))
    by = f"`cardshark worker --name {worker} --db …`" if worker else "`cardshark worker --db …`"
    console.print(f"queued {queued} matches for {by}", highlight=False)


async def _queue(url: str, tournament: Tournament, indices: list[int]) -> int:
    from server.workers.worker import ensure_queue_schema, make_app, queue_matches

    app = make_app(url)
    async with app.open_async():
        await ensure_queue_schema(app)
        return await queue_matches(app, tournament, indices)
