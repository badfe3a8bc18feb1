"""Referee workers: procrastinate jobs, one per scheduled match, played on any machine.

Why procrastinate and how failures are handled: docs/scaling.md. A job names a match by
(tournament, schedule index), never by row id, so a retried job plays the current attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import procrastinate
from procrastinate.app import WorkerOptions
from procrastinate.exceptions import ProcrastinateException
from procrastinate.types import JSONDict
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url

from server.bots.code import place_code
from server.bots.process import ManagedBot
from server.bots.sandbox import SandboxPolicy
from server.bots.start import BotToStart
from server.match.records import ClockSettings
from server.match.sessions import BotIdentity
from server.play.arena import TOURNAMENT_FINISHED, Arena
from server.play.one_match import play_until_not_voided
from server.play.preflight import start_managed
from server.play.tournament import (
    code_cache,
    code_digests,
    database_authenticator,
    identity_for,
)
from server.transport.tls import TlsConfig
from server.workers.queue import ensure_queue
from tournaments.db import parse_url, safe_url
from tournaments.errors import DatabaseUrlError, TournamentError
from tournaments.models import Bot, MatchStatus, Tournament, TournamentStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import Store

QUEUE = "matches"  # the shared queue: matches any worker may play
WORKER_QUEUE = "worker:"  # + a worker's name: matches only that worker plays
TASK = "cardshark:play_match"
MAX_ATTEMPTS = 5  # a job that fails (not stalls) this often stays failed, visible in the queue
WORKER_LOST = "worker lost: its job was found stalled (no heartbeat) and given to another"


def conninfo(url: str | None) -> str:
    """The libpq connection string of a PostgreSQL URL; DatabaseUrlError for any other."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise DatabaseUrlError(
            safe_url(parsed), "workers share a PostgreSQL database; give postgresql://…"
        )
    return make_url(parsed).set(drivername="postgresql").render_as_string(hide_password=False)


# A worker's own queue changes (take a job, finish it, hand a stalled one back, heartbeats)
# may be lost in a crash of PostgreSQL itself: each leaves the job in an earlier state, so it
# is taken again and finds its match recorded or staged (the store commits those durably
# on its own connection). Not flushing them saves a disk flush per change; deferring jobs
# (`tournament create`) stays durable. docs/scaling.md has the cases.
UNFLUSHED_COMMITS = {"options": "-c synchronous_commit=off"}


def queue_connector(url: str | None, *, durable: bool = True) -> procrastinate.PsycopgConnector:
    """procrastinate's connector to the database at url; a worker's need not flush commits."""
    if durable:
        return procrastinate.PsycopgConnector(conninfo=conninfo(url))
    return procrastinate.PsycopgConnector(conninfo=conninfo(url), kwargs=UNFLUSHED_COMMITS)


def make_app(url: str | None, *, durable: bool = True) -> procrastinate.App:
    """The task queue on the database at url (its tables are made by `ensure_queue_schema`);
    durable=False for a worker's (see UNFLUSHED_COMMITS)."""
    app = procrastinate.App(connector=queue_connector(url, durable=durable))
    retry = procrastinate.RetryStrategy(max_attempts=MAX_ATTEMPTS, wait=2)
    app.task(name=TASK, queue=QUEUE, pass_context=True, retry=retry)(play_match)
    return app


async def ensure_queue_schema(app: procrastinate.App) -> None:
    """Create procrastinate's tables on first use; refuse them when older than this
    procrastinate's (`cardshark db upgrade` upgrades them): server.workers.queue."""
    await ensure_queue(app)


def worker_queue(name: str) -> str:
    """The queue only the worker of this name takes jobs from."""
    return f"{WORKER_QUEUE}{name}"


def queue_for(tournament: Tournament) -> str:
    """Where a tournament's jobs go: its pinned worker's own queue, else the shared one.
    Every deferral of its jobs goes through here; procrastinate's retries keep the queue."""
    return worker_queue(tournament.worker) if tournament.worker else QUEUE


# A tournament's jobs not yet done go to its new queue: those waiting, and those a worker
# holds (if that worker stops before finishing one, procrastinate retries it on this queue).
MOVE_JOBS = text(
    "UPDATE procrastinate_jobs SET queue_name = :queue "
    "WHERE task_name = :task AND status IN ('todo', 'doing') "
    "AND (args->>'tournament_id')::int = :tid AND queue_name <> :queue RETURNING status"
)


def move_jobs(tournament_id: int, queue: str, moved: Counter[str]) -> Callable[[Connection], int]:
    """What moves a tournament's unfinished jobs to queue, counting them by status in moved."""

    def move(connection: Connection) -> int:
        rows = connection.execute(MOVE_JOBS, {"queue": queue, "task": TASK, "tid": tournament_id})
        moved.update(str(status) for (status,) in rows)
        return sum(moved.values())

    return move


async def queue_matches(app: procrastinate.App, tournament: Tournament, indices: list[int]) -> int:
    """Defer one job per schedule index on the tournament's queue; returns how many."""
    if not indices:
        return 0
    task = app.tasks[TASK]
    jobs: list[JSONDict] = [{"tournament_id": tournament.id, "schedule_index": i} for i in indices]
    await task.configure(queue=queue_for(tournament)).batch_defer_async(*jobs)
    return len(jobs)


@dataclass
class MatchPlayer:
    """One worker's means to play: the store, a local referee, the managed bots it started."""

    store: Store
    arena: Arena
    log_dir: Path
    name: str
    bots: dict[int, ManagedBot] = field(default_factory=dict)
    played: int = 0
    held: dict[int, list[str]] = field(default_factory=dict)  # tournament: its remote bots

    async def play(self, tournament_id: int, schedule_index: int) -> None:
        """Play the match's current attempt unless it is done, stage it, commit in order."""
        store = self.store
        tournament = await asyncio.to_thread(store.get_tournament, tournament_id)
        if tournament.worker and tournament.worker != self.name:
            # Its remote bots connect to that worker, not here: playing would charge them
            # no-shows for the fleet's mistake. The job fails (retried, then kept, visible).
            raise TournamentError(
                f"tournament {tournament_id} is played by worker {tournament.worker!r} "
                f"(its remote bots connect there), not by {self.name!r}"
            )
        match = await asyncio.to_thread(store.current_attempt, tournament_id, schedule_index)
        assert match.id is not None
        if match.status == MatchStatus.FINISHED.value or await asyncio.to_thread(
            store.is_staged, match.id
        ):
            await self._commit(tournament_id)
            return
        if match.status == MatchStatus.RUNNING.value:
            # Only a job that procrastinate retried finds its match running: the worker that
            # held it stopped (kill -9, lost machine). Its attempt is void, never rated.
            match = await asyncio.to_thread(store.void_match, match.id, WORKER_LOST)
        clock = ClockSettings(move_ms=tournament.clock_ms, bank_ms=tournament.bank_ms)
        entrants = await asyncio.to_thread(store.tournament_entrants, tournament_id)
        if tournament_id not in self.held:
            # Remote bots are waited for by the referee (no-show after clock.no_show_s), never
            # started here; they are told Goodbye when the tournament is finished.
            self.held[tournament_id] = [str(b.id) for b in entrants if not b.command]
            self.arena.hold(self.held[tournament_id])
        identities, code = await self._seat(entrants, match.seats, clock)
        record = await play_until_not_voided(
            store, self.arena, match, identities, clock, tournament=tournament, code=code
        )
        outcomes = [
            SeatOutcome(score, len(record.faults_of(seat)), record.forfeited[seat])
            for seat, score in enumerate(record.scores)
        ]
        await asyncio.to_thread(
            store.stage, int(record.match_id), outcomes, record.to_json(), self.name
        )
        self.played += 1
        await self._commit(tournament_id)

    async def _commit(self, tournament_id: int) -> None:
        """Record what is staged in schedule order; once the tournament is finished, its
        remote bots that no other tournament of this worker needs are told Goodbye."""
        await asyncio.to_thread(self.store.commit_staged, tournament_id)
        if not self.held.get(tournament_id):
            return  # no remote bot to let go: no read
        tournament = await asyncio.to_thread(self.store.get_tournament, tournament_id)
        if tournament.status == TournamentStatus.FINISHED.value:
            # Its bots may be entered in another tournament pinned here whose jobs wait in
            # the queue: that one holds them from now, not from its first match, or they
            # would leave on their Goodbye and forfeit every match of it.
            waiting = await asyncio.to_thread(self._remote_bots_waiting)
            for other, bots in waiting.items():
                self.held[other] = bots
                self.arena.hold(bots)
            await self.arena.release(self.held.pop(tournament_id), TOURNAMENT_FINISHED)

    def _remote_bots_waiting(self) -> dict[int, list[str]]:
        """The remote bots of this worker's unfinished tournaments not yet held, by
        tournament (run in a thread: it reads the store)."""
        waiting: dict[int, list[str]] = {}
        for other in self.store.list_tournaments():
            if (
                other.id is None
                or other.id in self.held
                or other.worker != self.name
                or other.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
            ):
                continue
            entrants = self.store.tournament_entrants(other.id)
            waiting[other.id] = [str(b.id) for b in entrants if not b.command]
        return waiting

    async def _seat(
        self, entrants: list[Bot], seats: list[int], clock: ClockSettings
    ) -> tuple[dict[int, BotIdentity], dict[int, str]]:
        """Identities of the seated bots, each managed one started here unless it runs (its
        stored code unpacked here first), and the digests of their stored code."""
        bots = {b.id: b for b in entrants}
        wanted = [
            BotToStart(bots[b].name, str(b), bots[b].command or "", digest=bots[b].code_digest)
            for b in dict.fromkeys(seats)
            if bots[b].command and not (b in self.bots and self.bots[b].running())
        ]
        if wanted:
            logs = self.log_dir / f"worker-{self.name}"
            cache = code_cache(self.arena)
            placed, refused = await place_code(wanted, cache, self.store.bot_archive)
            started = await start_managed(self.arena, placed, clock.no_show_s, logs)
            ids = {w.name: int(w.bot_id) for w in wanted}
            for bot in started.started:
                self.bots[ids[bot.name]] = bot
            for failure in [*refused, *started.failures]:
                if failure.server_fault:
                    raise TournamentError(failure.message())
                assert self.arena.running is not None
                self.arena.hub.mark_gone(failure.bot_id, failure.reason)
        identities = {b: identity_for(b, bots[b].name) for b in seats}
        return identities, code_digests([bots[b] for b in dict.fromkeys(seats)])


async def retry_stalled(app: procrastinate.App, every_s: float, stalled_s: float) -> None:
    """Hand every job whose worker sent no heartbeat for stalled_s back to the queue."""
    while True:
        await asyncio.sleep(every_s)
        try:
            for job in await app.job_manager.get_stalled_jobs(
                task_name=TASK, seconds_since_heartbeat=stalled_s
            ):
                with contextlib.suppress(ProcrastinateException):
                    await app.job_manager.retry_job(job)  # another worker may have first
        except ProcrastinateException:
            continue  # the database is away; try again next round


async def play_match(
    context: procrastinate.JobContext, tournament_id: int, schedule_index: int
) -> None:
    """Play one scheduled match (the procrastinate task)."""
    player = context.additional_context["player"]
    assert isinstance(player, MatchPlayer)
    await player.play(tournament_id, schedule_index)


def default_name() -> str:
    """This worker's name in logs and staged results: host and process id."""
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker runs: its name, its bots' logs, its heartbeat, when it stops, and where
    remote bots dial it (port None: they cannot)."""

    name: str
    log_dir: Path
    heartbeat_s: float = 10.0
    stalled_s: float = 30.0
    until_empty: bool = False  # stop when the queue has no job left (benchmarks)
    host: str = "127.0.0.1"
    port: int | None = None  # 0: any free port
    tls: TlsConfig | None = None


def worker_arena(settings: WorkerSettings, store: Store, sandbox: SandboxPolicy) -> Arena:
    """The referee a worker plays on: remote bots dial settings' host and port (tokens checked
    against the database). Without a port it still binds a loopback port nobody is told of;
    its managed bots use its Unix socket or the local transport."""
    listen = settings.port is not None
    return Arena(
        settings.log_dir,
        settings.host if listen else "127.0.0.1",
        settings.port or 0,
        authenticate=database_authenticator(store),
        tls=settings.tls if listen else None,
        sandbox=sandbox,
    )


def worker_options(settings: WorkerSettings, player: MatchPlayer) -> WorkerOptions:
    """procrastinate's run_worker_async options: one job at a time from the shared queue and
    this worker's own, heartbeats, and the player every job gets."""
    return {
        "queues": [QUEUE, worker_queue(settings.name)],
        "name": settings.name,
        "concurrency": 1,
        "wait": not settings.until_empty,
        "update_heartbeat_interval": settings.heartbeat_s,
        "stalled_worker_timeout": settings.stalled_s,
        "additional_context": {"player": player},
        "delete_jobs": "successful",
    }


async def run_worker(
    url: str,
    settings: WorkerSettings,
    sandbox: SandboxPolicy,
    on_listening: Callable[[str], None] | None = None,
) -> int:
    """Take and play match jobs, from the shared queue and this worker's own, until
    SIGTERM/SIGINT (a match in play is finished first); returns how many it played. With a
    port, remote bots dial it (tokens checked against the database): on_listening is told
    the address."""
    app = make_app(url, durable=False)
    async with app.open_async():
        await ensure_queue_schema(app)
        store = await asyncio.to_thread(Store, url)
        try:
            async with worker_arena(settings, store, sandbox) as arena:
                if settings.port is not None and on_listening is not None:
                    on_listening(arena.address)
                player = MatchPlayer(store, arena, settings.log_dir, settings.name)
                watcher = asyncio.create_task(
                    retry_stalled(app, settings.heartbeat_s, settings.stalled_s)
                )
                try:
                    await app.run_worker_async(**worker_options(settings, player))
                finally:
                    watcher.cancel()
                return player.played
        finally:
            store.close()
