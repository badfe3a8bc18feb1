"""Play a stored tournament's unfinished matches against managed and remote bots."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from server.bots.code import CodeCache, cache_for, place_code
from server.bots.process import ManagedBot
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.bots.start import BotToStart
from server.match.records import REMOTE_WAIT_S, ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.arena import DEFAULT_TRANSPORT, TOURNAMENT_FINISHED, TOURNAMENT_STOPPED, Arena
from server.play.heap import frozen_heap
from server.play.load import AdaptiveLimit, StormWatch
from server.play.one_match import Referee, StoreWriter, play_until_not_voided
from server.play.preflight import BotsDidNotStart, await_remote, start_managed, wrong_game
from server.play.referee_pool import PoolEvents, PoolPlan, RefereePool, auto_processes
from server.play.referee_wire import Live, ManagedEntrant
from server.transport.tls import TlsConfig
from tournaments.committer import OrderedCommitter
from tournaments.models import Bot, Match, Tournament, TournamentStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import FinishedMatch, Store


@dataclass(frozen=True)
class Progress:
    """Where a running tournament stands."""

    done: int
    total: int
    last: MatchRecord | None
    in_flight: int = 0
    limit: int = 0  # matches allowed at once now (the runner lowers it under load)
    load_voids: int = 0  # matches voided for server load and replayed, so far
    per_process: tuple[int, ...] = ()  # attempts each referee process played (--processes)


ProgressCallback = Callable[[Progress], None]
# A managed bot that stopped running: its name, how it ended, where its log is.
BotExitCallback = Callable[[str, str, Path | None], None]


def identity_for(bot_id: int, name: str) -> BotIdentity:
    """The referee's identity of a stored bot."""
    return BotIdentity(str(bot_id), name)


def database_authenticator(store: Store) -> Callable[[str], BotIdentity | None]:
    """Authenticate remote bots by their registered token (compared as a hash)."""

    def authenticate(token: str) -> BotIdentity | None:
        bot = store.find_bot_by_token(token)
        if bot is None or bot.id is None:
            return None
        return identity_for(bot.id, bot.name)

    return authenticate


async def run_tournament(
    store: Store,
    tournament_id: int,
    *,
    concurrency: int = 1,
    port: int = 0,
    host: str = "127.0.0.1",
    log_dir: Path | str | None = None,
    on_progress: ProgressCallback | None = None,
    clock: ClockSettings | None = None,
    arena: Arena | None = None,
    tls: TlsConfig | None = None,
    sandbox: SandboxPolicy = NO_SANDBOX,
    cpu_clocks: bool = True,
    allow_absent: bool = False,
    on_bot_exit: BotExitCallback | None = None,
    transport: str = DEFAULT_TRANSPORT,
    remote_wait_s: float = REMOTE_WAIT_S,
    on_waiting: Callable[[list[str]], None] | None = None,
    processes: int | None = 1,
) -> int:
    """Play every unfinished match of a tournament; returns how many were recorded.

    Results are committed in schedule order (a match that finishes early waits for the ones
    before it), each with its rating update in one transaction, so a kill at any moment loses
    at most the matches in flight, and those are played again on resume. Without an arena,
    a server is started on `port` (TLS with `tls`) for the tournament's length, its managed
    bots confined by `sandbox`.

    Every managed bot is started and must say Hello, and every remote bot must connect
    within remote_wait_s (on_waiting hears who is still away), before the first match: one
    that does not stops the run (BotsDidNotStart) with nothing played, unless allow_absent,
    when it forfeits its matches at once. A bot whose Hello names games, not this one, stops
    the run whatever allow_absent says. A managed bot whose process ends mid-run, or a
    remote bot that disconnects, is reported to on_bot_exit once.

    With processes > 1 and no remote entrant, the matches are refereed by that many referee
    processes, each with its own copy of every managed bot (server/play/referee_pool.py);
    this process still writes every row. Remote bots connect to this process, so a
    tournament with one is refereed here. processes=None: as many as the run's unfinished
    matches pay for, up to one per core (auto_processes).
    """
    run = Run(
        concurrency,
        log_dir,
        on_progress,
        clock,
        allow_absent,
        on_bot_exit,
        remote_wait_s,
        on_waiting,
        processes,
    )
    if arena is not None:
        with frozen_heap():
            return await _run(store, tournament_id, arena, run)
    own = Arena(
        log_dir or "logs",
        host,
        port,
        database_authenticator(store),
        tls=tls,
        sandbox=sandbox,
        cpu_clocks=cpu_clocks,
        transport=transport,
    )
    async with own:
        with frozen_heap():
            return await _run(store, tournament_id, own, run)


@dataclass(frozen=True)
class Run:
    """How the runner plays: the caller's choices for one run."""

    concurrency: int
    log_dir: Path | str | None  # None: the arena's (serve --log-dir)
    on_progress: ProgressCallback | None
    clock: ClockSettings | None
    allow_absent: bool
    on_bot_exit: BotExitCallback | None
    remote_wait_s: float = REMOTE_WAIT_S
    on_waiting: Callable[[list[str]], None] | None = None
    processes: int | None = 1  # None: auto_processes of the unfinished matches


async def _run(store: Store, tournament_id: int, arena: Arena, run: Run) -> int:
    tournament = await asyncio.to_thread(store.get_tournament, tournament_id)
    entrants = await asyncio.to_thread(store.tournament_entrants, tournament_id)
    pending = await asyncio.to_thread(store.pending_matches, tournament_id)
    status = await asyncio.to_thread(store.tournament_status, tournament_id)
    total, already = status.scheduled, status.finished
    if not pending:
        return 0
    settings = run.clock or ClockSettings(move_ms=tournament.clock_ms, bank_ms=tournament.bank_ms)
    identities = {b.id: identity_for(b.id, b.name) for b in entrants if b.id is not None}
    code = code_digests(entrants)
    committer: OrderedCommitter[FinishedMatch] = OrderedCommitter(
        [m.schedule_index for m in pending], lambda finished: _record(store, finished)
    )
    writer = StoreWriter()
    logs = Path(run.log_dir or arena.log_dir) / f"tournament-{tournament_id}"
    spawned: list[ManagedBot] = []
    limit = AdaptiveLimit(run.concurrency)
    storms = StormWatch()
    load_voids = [0]

    tasks: list[asyncio.Task[None]] = []
    lag = arena.hub.lag
    pool = _pool(
        store, tournament, entrants, len(pending), arena, run, settings, logs, writer, storms
    )
    referee: Referee = arena if pool is None else pool

    def loop_lag() -> float:
        here = lag.percentile(0.9, clear=True)
        return here if pool is None else max(here, pool.lag)

    follower = asyncio.create_task(limit.follow(loop_lag))
    mine: set[str] = set()

    def exited(bot: ManagedBot) -> None:
        if bot.name in mine and run.on_bot_exit is not None:
            run.on_bot_exit(bot.name, bot.exit_description(), bot.log_path)

    async def play(match: Match) -> None:
        async with limit:
            record = await play_until_not_voided(
                store,
                referee,
                match,
                identities,
                settings,
                storms,
                limit,
                load_voids,
                tournament=tournament,
                writer=writer,
                code=code,
            )
        outcomes = tuple(
            SeatOutcome(score, len(record.faults_of(seat)), record.forfeited[seat])
            for seat, score in enumerate(record.scores)
        )
        finished = FinishedMatch(int(record.match_id), outcomes, record.to_json())
        await writer.submit(committer.finish, match.schedule_index, finished)
        if run.on_progress is not None:
            done = already + committer.committed
            per_process = () if pool is None else tuple(pool.played)
            run.on_progress(
                Progress(
                    done,
                    total,
                    record,
                    limit.in_flight,
                    limit.limit,
                    load_voids[0],
                    per_process,
                )
            )

    arena.exit_listeners.append(exited)
    dropped = _remote_drop_warning(entrants, run)
    stop_listening = arena.hub.listen(on_detach=dropped, on_timeout=storms.note)
    remote = [str(b.id) for b in entrants if not b.command and b.id is not None]
    arena.hold(remote)  # told Goodbye at the end, unless another running tournament needs them
    reason = TOURNAMENT_STOPPED
    try:
        if pool is None:
            managed = await _bring_entrants(
                store, tournament, entrants, arena, run, settings, logs, already, spawned
            )
            mine.update(managed)
        else:
            await _bring_to_pool(pool, tournament, run, already)
        tasks = [asyncio.create_task(play(m)) for m in pending]
        await asyncio.gather(*tasks)
        reason = TOURNAMENT_FINISHED
    finally:
        follower.cancel()
        arena.exit_listeners.remove(exited)
        stop_listening()
        for task in tasks:
            task.cancel()
        await asyncio.gather(
            arena.stop_bots(spawned, reason),
            arena.release(remote, reason),
            *([] if pool is None else [pool.stop(reason)]),
        )
        await writer.close()
    return committer.committed


def _pool(
    store: Store,
    tournament: Tournament,
    entrants: Sequence[Bot],
    matches: int,
    arena: Arena,
    run: Run,
    settings: ClockSettings,
    logs: Path,
    writer: StoreWriter,
    storms: StormWatch,
) -> RefereePool | None:
    """The run's referee processes, when it asks for more than one (or, asking for none,
    its `matches` pay for more: auto_processes) and every entrant is managed (remote bots
    connect to this process: a run with one referees here)."""
    processes = auto_processes(matches) if run.processes is None else run.processes
    if processes < 2 or any(not b.command for b in entrants):
        return None
    bots = tuple(
        ManagedEntrant(b.name, str(b.id), b.command, b.code_digest)
        for b in entrants
        if b.command and b.id is not None
    )
    archives = {
        b.digest: archive
        for b in bots
        if b.digest is not None and (archive := store.bot_archive(b.digest)) is not None
    }
    plan = PoolPlan(
        tournament.game,
        bots,
        archives,
        logs,
        arena.sandbox,
        arena.cpu_clocks,
        arena.transport,
        settings.no_show_s,
    )

    def live(message: Live) -> None:
        if message.step < 0:
            written = writer.submit(store.clear_live, message.match_id)
        else:
            written = writer.submit(
                store.publish_live, message.match_id, message.step, message.data
            )
        written.add_done_callback(_quiet)

    def bot_exited(name: str, how: str, log: Path | None) -> None:
        if run.on_bot_exit is not None:
            run.on_bot_exit(name, how, log)

    return RefereePool(plan, processes, PoolEvents(live, storms.note, bot_exited))


def _quiet(future: asyncio.Future[None]) -> None:
    """A live snapshot's write failed: the page shows the replay instead; play goes on."""
    if not future.cancelled():
        future.exception()


async def _bring_to_pool(pool: RefereePool, tournament: Tournament, run: Run, already: int) -> None:
    """Start the referee processes and their bots; raise BotsDidNotStart as _bring_entrants."""
    assert tournament.id is not None
    failed = await pool.start()
    stop = any(f.server_fault or f.refused for f in failed)
    if failed and (not run.allow_absent or stop):
        raise BotsDidNotStart(tournament.id, failed, already)
    for failure in failed:
        pool.mark_gone(failure.bot_id, failure.reason)
        if run.on_bot_exit is not None:
            run.on_bot_exit(failure.name, failure.reason, failure.log_path)


def _remote_drop_warning(entrants: Sequence[Bot], run: Run) -> Callable[[BotIdentity], None]:
    """What tells the organizer, once per remote entrant, that its connection ended."""
    away_names = {str(b.id): b.name for b in entrants if not b.command and b.id is not None}
    dropped_once: set[str] = set()

    def dropped(identity: BotIdentity) -> None:
        name = away_names.get(identity.bot_id)
        if name is None or identity.bot_id in dropped_once or run.on_bot_exit is None:
            return
        dropped_once.add(identity.bot_id)
        run.on_bot_exit(name, "its remote connection ended (until it reconnects)", None)

    return dropped


async def _bring_entrants(
    store: Store,
    tournament: Tournament,
    entrants: Sequence[Bot],
    arena: Arena,
    run: Run,
    settings: ClockSettings,
    logs: Path,
    already: int,
    spawned: list[ManagedBot],
) -> list[str]:
    """Start the managed entrants (into spawned, for the caller to stop) and wait for the
    remote ones; raise BotsDidNotStart unless the absent may forfeit. The managed names."""
    tournament_id = tournament.id
    assert tournament_id is not None
    managed = [
        BotToStart(b.name, str(b.id), b.command, digest=b.code_digest)
        for b in entrants
        if b.command and b.id is not None
    ]
    placed, refused = await place_code(managed, code_cache(arena), store.bot_archive)
    preflight = await start_managed(arena, placed, settings.no_show_s, logs)
    spawned.extend(preflight.started)
    failed = [*refused, *preflight.failures]
    away = [(b.name, str(b.id)) for b in entrants if not b.command and b.id is not None]
    # Waiting for its remote bots is part of running it (the Admin service shows it so).
    was_pending = tournament.status == TournamentStatus.PENDING.value
    if was_pending and away:
        await asyncio.to_thread(
            store.set_tournament_status, tournament_id, TournamentStatus.RUNNING
        )
    failed += await await_remote(arena, away, run.remote_wait_s, run.on_waiting)
    seated = [(b.name, str(b.id)) for b in entrants if b.id is not None]
    failed += wrong_game(arena, seated, tournament.game)
    stop = any(f.server_fault or f.refused for f in failed)
    if failed and (not run.allow_absent or stop):
        if was_pending:  # nothing of it ran: it waits as it did before
            await asyncio.to_thread(
                store.set_tournament_status, tournament_id, TournamentStatus.PENDING
            )
        raise BotsDidNotStart(tournament_id, failed, already)
    for failure in failed:
        arena.hub.mark_gone(failure.bot_id, failure.reason)
        if run.on_bot_exit is not None:
            run.on_bot_exit(failure.name, failure.reason, failure.log_path)
    return [b.name for b in managed]


def code_digests(bots: Sequence[Bot]) -> dict[int, str]:
    """The digest of each bot's stored code, for bots that have one."""
    return {b.id: b.code_digest for b in bots if b.id is not None and b.code_digest}


def code_cache(arena: Arena) -> CodeCache:
    """Where this arena's managed bots' stored code is unpacked."""
    return cache_for(arena.sandbox)


def _record(store: Store, finished: FinishedMatch) -> None:
    store.record(finished)
