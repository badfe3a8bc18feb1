"""A referee worker's logic in the pytest process: claim a job, play its match's current
attempt, stage and commit it in schedule order, void and replay the attempt of a worker that
died, and the queue it takes jobs from (real PostgreSQL for the queue).

tests/server/test_workers.py runs `cardshark worker` processes and kills them; here the same
paths run with in-process bots (the Python SDK's client in this event loop, dialing the
worker's referee), so a change to any of them fails a test in seconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import procrastinate
import pytest
from procrastinate.app import WorkerOptions
from procrastinate.exceptions import ProcrastinateException
from sqlalchemy import text

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot import BotClient
from server.bots.archive import pack_directory
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.match.sessions import BotIdentity
from server.play.arena import TOURNAMENT_FINISHED, Arena
from server.play.tournament import database_authenticator
from server.transport.tls import TlsConfig
from server.workers import worker
from server.workers.queue import BASELINE, VERSION_TABLE, QueueSchemaOutdatedError, newest
from server.workers.worker import (
    MAX_ATTEMPTS,
    QUEUE,
    TASK,
    UNFLUSHED_COMMITS,
    WORKER_LOST,
    MatchPlayer,
    WorkerSettings,
    conninfo,
    default_name,
    ensure_queue_schema,
    make_app,
    move_jobs,
    queue_connector,
    queue_for,
    queue_matches,
    retry_stalled,
    run_worker,
    worker_arena,
    worker_options,
    worker_queue,
)
from tests.server.conftest import RANDOM_BOT
from tournaments.errors import DatabaseUrlError, TournamentError
from tournaments.models import BotArchive, MatchStatus, Tournament, TournamentStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import Store

REMOTE = ("r1", "r2", "r3")  # a Knaves round robin of three: six matches


def first_legal(request: pb.DecisionRequest) -> str:
    return str(request.legal_actions[0].id)


class Remotes:
    """In-process remote bots: the SDK's client in this loop, each playing its first legal
    action, each told Goodbye once its tournament is done."""

    def __init__(self, tokens: dict[str, str]) -> None:
        self.tokens = tokens
        self.clients: dict[str, BotClient] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self.clocks: set[tuple[int, int]] = set()  # (move_ms, bank_ms) of every match started

    def seen(self, message: pb.RefereeMessage) -> None:
        if message.WhichOneof("kind") == "match_started":
            clock = message.match_started.clock
            self.clocks.add((clock.move_ms, clock.bank_ms))

    def dial(self, address: str) -> None:
        for name, token in self.tokens.items():
            client = BotClient(
                first_legal, server=address, token=token, reconnect_s=5, on_event=self.seen
            )
            self.clients[name] = client
            self.tasks.append(asyncio.ensure_future(client.run()))

    async def until_connected(self, arena: Arena) -> None:
        for _ in range(500):
            if len(arena.hub.connected()) >= len(self.tokens):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the remote bots did not connect")

    def goodbyes(self) -> dict[str, str | None]:
        return {
            n: (c.goodbye.reason if c.goodbye is not None else None)
            for n, c in self.clients.items()
        }

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def remote_tournament(
    store: Store, worker_name: str | None = "w", names: tuple[str, ...] = REMOTE, seed: int = 3
) -> tuple[Tournament, dict[str, str]]:
    known = {b.name for b in store.list_bots()}
    tokens = {name: store.add_bot(name)[1] for name in names if name not in known}
    tournament = store.create_tournament("knaves", list(names), seed=seed, worker=worker_name)
    return tournament, tokens


@asynccontextmanager
async def arena_with_remotes(
    store: Store, tmp_path: Path, tokens: dict[str, str]
) -> AsyncIterator[tuple[Arena, Remotes]]:
    remotes = Remotes(tokens)
    async with Arena(tmp_path, authenticate=database_authenticator(store)) as arena:
        remotes.dial(arena.address)
        await remotes.until_connected(arena)
        try:
            yield arena, remotes
        finally:
            await remotes.close()


def attempts(store: Store, tid: int, index: int) -> list[tuple[int, str, str | None]]:
    """Every attempt of one scheduled match: (attempt, status, void reason)."""
    return [
        (m.attempt, m.status, (m.result or {}).get("void_reason"))
        for m in store.matches(tid)
        if m.schedule_index == index
    ]


def staged_by(store: Store) -> dict[int, str]:
    """The schedule indices staged and not yet recorded, with the worker that staged each."""
    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT schedule_index, worker FROM staged_results"))
        return {int(i): str(w) for i, w in rows}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as opened:
        yield opened


# -- the player: one job's match ------------------------------------------------------------


def test_a_job_plays_its_match_once_and_the_last_commit_says_goodbye(
    store: Store, tmp_path: Path
) -> None:
    tournament, tokens = remote_tournament(store)
    tid = tournament.id
    assert tid is not None

    async def run() -> tuple[MatchPlayer, list[Any], dict[str, str | None]]:
        async with arena_with_remotes(store, tmp_path, tokens) as (arena, remotes):
            player = MatchPlayer(store, arena, tmp_path, "w")
            seen: list[Any] = []
            # Out of order: index 3 is staged, and waits for 0-2 to be recorded first.
            await player.play(tid, 3)
            seen.append((player.played, attempts(store, tid, 3), staged_by(store)))
            await player.play(tid, 3)  # retried after it staged: nothing is played again
            seen.append((player.played, attempts(store, tid, 3), dict(player.held)))
            for index in (0, 1, 2):
                await player.play(tid, index)
            seen.append((player.played, attempts(store, tid, 3)))
            await player.play(tid, 0)  # recorded already: not played again
            seen.append(player.played)
            for index in (4, 5):
                await player.play(tid, index)
            await asyncio.wait_for(asyncio.gather(*remotes.tasks), 10)
            return player, seen, remotes.goodbyes()

    player, seen, goodbyes = asyncio.run(run())
    pending = MatchStatus.RUNNING.value
    finished = MatchStatus.FINISHED.value
    ids = sorted(str(b.id) for b in store.tournament_entrants(tid))
    # Played and staged by this worker, not recorded.
    assert seen[0] == (1, [(0, pending, None)], {3: "w"})
    assert seen[1] == (1, [(0, pending, None)], {tid: ids})
    assert seen[2] == (4, [(0, finished, None)])
    assert seen[3] == 4
    assert player.played == 6 and player.held == {}
    assert store.get_tournament(tid).status == "finished"
    assert all(attempts(store, tid, i) == [(0, finished, None)] for i in range(6))
    assert goodbyes == dict.fromkeys(REMOTE, TOURNAMENT_FINISHED)


def test_remote_bots_another_tournament_of_this_worker_still_needs_are_not_told_goodbye(
    store: Store, tmp_path: Path
) -> None:
    # Tournaments pinned to one worker with the same remote bots: one under way (its first
    # match played), one queued behind (none played yet). When the first is finished, the
    # bots must stay for both; once those are finished too, they are told Goodbye. A
    # cancelled tournament and one of another worker hold nobody here.
    first, tokens = remote_tournament(store, seed=3)
    started, _ = remote_tournament(store, seed=4)
    queued, _ = remote_tournament(store, seed=5)
    cancelled, _ = remote_tournament(store, seed=6)
    elsewhere, _ = remote_tournament(store, "other", seed=7)
    ids = [t.id or 0 for t in (first, started, queued, cancelled, elsewhere)]
    store.set_tournament_status(ids[3], TournamentStatus.CANCELLED)

    async def run() -> tuple[dict[str, str | None], dict[str, str | None]]:
        async with arena_with_remotes(store, tmp_path, tokens) as (arena, remotes):
            player = MatchPlayer(store, arena, tmp_path, "w")
            await player.play(ids[1], 0)
            for index in range(6):
                await player.play(ids[0], index)
            await asyncio.sleep(0.2)  # a Goodbye, if sent, has arrived
            after_first = remotes.goodbyes()
            for tid in ids[1:3]:
                for index in range(6):
                    await player.play(tid, index)
            await asyncio.wait_for(asyncio.gather(*remotes.tasks), 10)
            return after_first, remotes.goodbyes()

    after_first, after_all = asyncio.run(run())
    assert after_first == dict.fromkeys(REMOTE, None)
    assert after_all == dict.fromkeys(REMOTE, TOURNAMENT_FINISHED)
    for tid in ids[:3]:
        for match in store.matches(tid):
            assert match.status == MatchStatus.FINISHED.value
            assert not any((match.record or {})["forfeited"]), match.record


def test_a_retried_job_whose_match_was_staged_commits_it_without_playing(
    store: Store, tmp_path: Path
) -> None:
    # The worker that played it staged it, then stopped before its commit.
    tournament, tokens = remote_tournament(store)
    tid = tournament.id
    assert tid is not None
    match = store.current_attempt(tid, 0)
    assert match.id is not None
    store.start_match(match.id)
    store.stage(match.id, [SeatOutcome(1.0, 0, False)] * 3, None, "gone")

    async def run() -> MatchPlayer:
        async with Arena(tmp_path) as arena:
            player = MatchPlayer(store, arena, tmp_path, "w")
            await player.play(tid, 0)
            return player

    assert asyncio.run(run()).played == 0
    assert attempts(store, tid, 0) == [(0, MatchStatus.FINISHED.value, None)]
    assert staged_by(store) == {}


def test_the_tournaments_clock_is_the_clock_of_its_matches(store: Store, tmp_path: Path) -> None:
    known = {b.name for b in store.list_bots()}
    tokens = {name: store.add_bot(name)[1] for name in REMOTE if name not in known}
    tournament = store.create_tournament(
        "knaves", list(REMOTE), seed=2, worker="w", clock_ms=4321, bank_ms=1234
    )
    tid = tournament.id
    assert tid is not None

    async def run() -> set[tuple[int, int]]:
        async with arena_with_remotes(store, tmp_path, tokens) as (arena, remotes):
            await MatchPlayer(store, arena, tmp_path, "w").play(tid, 0)
            return remotes.clocks

    assert asyncio.run(run()) == {(4321, 1234)}


def test_the_running_attempt_of_a_worker_that_died_is_voided_and_played_again(
    store: Store, tmp_path: Path
) -> None:
    tournament, tokens = remote_tournament(store)
    tid = tournament.id
    assert tid is not None
    lost = store.current_attempt(tid, 2)
    assert lost.id is not None
    store.start_match(lost.id)  # a worker took it, then was killed

    async def run() -> MatchPlayer:
        async with arena_with_remotes(store, tmp_path, tokens) as (arena, _):
            player = MatchPlayer(store, arena, tmp_path, "w")
            await player.play(tid, 2)
            return player

    player = asyncio.run(run())
    assert player.played == 1
    assert attempts(store, tid, 2) == [
        (0, MatchStatus.VOIDED.value, WORKER_LOST),
        (1, MatchStatus.RUNNING.value, None),  # played and staged: index 0 is not in yet
    ]
    assert store.is_staged(store.current_attempt(tid, 2).id or 0)
    again = store.current_attempt(tid, 2)
    assert (again.seats, again.seed) == (lost.seats, lost.seed)  # the same match, replayed


def test_a_tournament_pinned_to_another_worker_is_refused_and_nothing_is_played(
    store: Store, tmp_path: Path
) -> None:
    tournament, tokens = remote_tournament(store, worker_name="far")
    tid = tournament.id
    assert tid is not None

    async def run() -> MatchPlayer:
        async with Arena(tmp_path) as arena:
            player = MatchPlayer(store, arena, tmp_path, "near")
            with pytest.raises(TournamentError) as refused:
                await player.play(tid, 0)
            assert str(refused.value) == (
                f"tournament {tid} is played by worker 'far' (its remote bots connect there), "
                "not by 'near'"
            )
            return player

    player = asyncio.run(run())
    assert player.played == 0 and player.held == {}
    assert attempts(store, tid, 0) == [(0, MatchStatus.PENDING.value, None)]


def test_managed_bots_are_started_once_and_a_bot_that_cannot_start_is_gone(
    store: Store, tmp_path: Path
) -> None:
    # A managed bot of stored code, one that exits before its Hello (its fault: it forfeits),
    # and a remote one.
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(RANDOM_BOT[1], tree / "bot.py")
    packed = pack_directory(tree)
    archive = BotArchive(digest=packed.digest, data=packed.data, size=packed.size)
    store.add_bot("managed", f"{sys.executable} bot.py", archive)
    store.add_bot("broken", f"{sys.executable} -c 'raise SystemExit(3)'")
    token = store.add_bot("remote")[1]
    tournament = store.create_tournament(
        "knaves", ["managed", "broken", "remote"], seed=4, worker="w"
    )
    tid = tournament.id
    assert tid is not None

    async def run() -> tuple[MatchPlayer, list[int], list[str]]:
        async with arena_with_remotes(store, tmp_path, {"remote": token}) as (arena, _):
            spawned: list[str] = []
            real = arena.spawn

            async def spawn(name: str, *args: Any, **kwargs: Any) -> Any:
                spawned.append(name)
                return await real(name, *args, **kwargs)

            arena.spawn = spawn  # type: ignore[method-assign]
            player = MatchPlayer(store, arena, tmp_path, "w")
            await player.play(tid, 0)
            await player.play(tid, 1)
            running = [i for i, b in player.bots.items() if b.running()]
            return player, running, spawned

    player, running, spawned = asyncio.run(run())
    managed, broken = store.get_bot("managed"), store.get_bot("broken")
    # The managed bot started once, for both matches; the broken one tried each time.
    assert spawned == ["managed", "broken", "broken"]
    assert set(player.bots) == {managed.id, broken.id} and running == [managed.id]
    assert (tmp_path / "worker-w" / "managed.stderr.log").exists()
    for index in (0, 1):
        (match,) = [m for m in store.matches(tid) if m.schedule_index == index]
        assert match.status == MatchStatus.FINISHED.value and match.id is not None
        record = match.record or {}
        assert record["code"] == [packed.digest if b == managed.id else None for b in match.seats]
        seat = match.seats.index(broken.id or 0)
        (gone,) = [f for f in record["faults"] if f["seat"] == seat]
        assert "exited with status 3 before saying Hello" in gone["detail"], gone
        # What was staged is what was recorded, seat by seat.
        results = {r.seat: r for r in store.seat_results(match.id)}
        for i, score in enumerate(record["scores"]):
            faults = len([f for f in record["faults"] if f["seat"] == i])
            forfeited = record["forfeited"][i]
            assert (results[i].score, results[i].faults, results[i].forfeited) == (
                score,
                faults,
                forfeited,
            )
        assert results[seat].forfeited and results[seat].faults == 1


def test_a_bot_the_server_cannot_start_fails_the_job_and_charges_nobody(
    store: Store, tmp_path: Path
) -> None:
    bot_dir = tmp_path / "bots"
    bot_dir.mkdir()
    script = bot_dir / "bot.py"
    script.write_text("")
    for name in ("a", "b", "c"):
        store.add_bot(name, f"{sys.executable} {script}")
    tournament = store.create_tournament("knaves", ["a", "b", "c"], seed=1, worker="w")
    tid = tournament.id
    assert tid is not None
    # The server's own file in the bots' directory: the sandbox refuses, the server's fault.
    policy = SandboxPolicy(forbidden=(str(bot_dir / "cs.db"),))

    async def run() -> str:
        async with Arena(tmp_path, sandbox=policy) as arena:
            player = MatchPlayer(store, arena, tmp_path, "w")
            with pytest.raises(TournamentError) as failed:
                await player.play(tid, 0)
            assert player.played == 0
            return str(failed.value)

    message = asyncio.run(run())
    assert "could not be started by the server" in message and "cs.db" in message
    assert attempts(store, tid, 0) == [(0, MatchStatus.PENDING.value, None)]


# -- the queue on PostgreSQL ----------------------------------------------------------------


def test_names_of_queues_and_of_the_worker() -> None:
    assert worker_queue("w1") == "worker:w1"
    assert queue_for(Tournament.model_construct(worker="w1")) == "worker:w1"
    assert queue_for(Tournament.model_construct(worker=None)) == QUEUE == "matches"
    assert queue_for(Tournament.model_construct(worker="")) == QUEUE
    assert default_name() == f"{socket.gethostname()}-{os.getpid()}"
    assert WorkerSettings("w", Path("logs")) == WorkerSettings(
        "w", Path("logs"), 10.0, 30.0, False, "127.0.0.1", None, None
    )


def test_workers_need_postgresql_and_get_libpqs_own_url() -> None:
    assert conninfo("postgresql+psycopg://u:secret@db.example:5433/cs") == (
        "postgresql://u:secret@db.example:5433/cs"
    )
    assert conninfo("postgresql://u@h/cs") == "postgresql://u@h/cs"
    with pytest.raises(DatabaseUrlError) as refused:
        conninfo("mysql://u:secret@h/cs")
    assert str(refused.value) == (
        "bad database URL 'mysql://u:***@h/cs': "  # the password is not repeated
        "workers share a PostgreSQL database; give postgresql://…"
    )


def test_the_task_retries_failures_on_the_shared_queue() -> None:
    for durable in (True, False):
        app = make_app("postgresql://u@h/cs", durable=durable)
        task = app.tasks[TASK]
        assert (task.name, task.queue, task.pass_context) == (TASK, QUEUE, True)
        assert task.func is worker.play_match
        retry = task.retry_strategy
        assert isinstance(retry, procrastinate.RetryStrategy)
        assert (retry.max_attempts, retry.wait) == (MAX_ATTEMPTS, 2)
        connector = app.connector
        assert isinstance(connector, procrastinate.PsycopgConnector)
        assert connector._pool_args["conninfo"] == "postgresql://u@h/cs"
        kwargs = connector._pool_args.get("kwargs")
        assert kwargs == (None if durable else UNFLUSHED_COMMITS), kwargs
    # Unless told otherwise (deferring jobs: `tournament create`), every commit is flushed.
    connector = make_app("postgresql://u@h/cs").connector
    assert isinstance(connector, procrastinate.PsycopgConnector)
    assert connector._pool_args.get("kwargs") is None
    assert queue_connector("postgresql://u@h/cs")._pool_args.get("kwargs") is None


def test_a_worker_takes_one_job_at_a_time_from_both_its_queues_with_its_player(
    store: Store, tmp_path: Path
) -> None:
    settings = WorkerSettings("w7", tmp_path, heartbeat_s=1.5, stalled_s=4.5)
    player = MatchPlayer(store, Arena(tmp_path), tmp_path, "w7")
    assert worker_options(settings, player) == {
        "queues": ["matches", "worker:w7"],
        "name": "w7",
        "concurrency": 1,
        "wait": True,
        "update_heartbeat_interval": 1.5,
        "stalled_worker_timeout": 4.5,
        "additional_context": {"player": player},
        "delete_jobs": "successful",
    }
    benchmark = WorkerSettings("w7", tmp_path, until_empty=True)
    assert worker_options(benchmark, player)["wait"] is False


def test_remote_bots_dial_a_worker_only_where_it_listens(store: Store, tmp_path: Path) -> None:
    token = store.add_bot("far")[1]
    tls = TlsConfig(b"chain", b"key")
    listening = WorkerSettings("w", tmp_path, host="0.0.0.0", port=7777, tls=tls)
    arena = worker_arena(listening, store, SandboxPolicy(kind="none", code_cache="/c"))
    assert (arena.host, arena.port, arena.tls, arena.log_dir) == ("0.0.0.0", 7777, tls, tmp_path)
    assert arena.sandbox == SandboxPolicy(kind="none", code_cache="/c")
    assert arena.fallback_auth is not None
    assert arena.fallback_auth(token) == BotIdentity(str(store.get_bot("far").id), "far")
    assert arena.fallback_auth("not a token") is None
    # No port: a loopback port nobody is told of, never TLS.
    closed = worker_arena(WorkerSettings("w", tmp_path, host="0.0.0.0", tls=tls), store, NO_SANDBOX)
    assert (closed.host, closed.port, closed.tls) == ("127.0.0.1", 0, None)
    anywhere = worker_arena(WorkerSettings("w", tmp_path, port=0), store, NO_SANDBOX)
    assert (anywhere.host, anywhere.port) == ("127.0.0.1", 0)


class ScriptedJobs:
    """procrastinate's job manager as retry_stalled sees it, scripted round by round."""

    def __init__(self, rounds: list[list[str] | Exception], done: asyncio.Event) -> None:
        self.rounds = rounds
        self.done = done
        self.asked: list[dict[str, Any]] = []
        self.retried: list[str] = []

    async def get_stalled_jobs(self, **kwargs: Any) -> list[str]:
        self.asked.append(kwargs)
        if not self.rounds:
            self.done.set()
            await asyncio.Event().wait()
        now = self.rounds.pop(0)
        if isinstance(now, Exception):
            raise now
        return now

    async def retry_job(self, job: str) -> None:
        self.retried.append(job)
        if job.startswith("taken"):
            raise ProcrastinateException("another worker retried it first")


def test_stalled_jobs_are_handed_back_every_round_whatever_fails() -> None:
    async def run() -> tuple[ScriptedJobs, float]:
        done = asyncio.Event()
        jobs = ScriptedJobs(
            [["taken-1", "a"], ProcrastinateException("database away"), ["b"]], done
        )
        app = type("App", (), {"job_manager": jobs})()
        loop = asyncio.get_running_loop()
        began = loop.time()
        watcher = asyncio.create_task(retry_stalled(app, every_s=0.05, stalled_s=7.5))
        await asyncio.wait_for(done.wait(), 5)
        took = loop.time() - began
        watcher.cancel()
        with pytest.raises(asyncio.CancelledError):
            await watcher
        return jobs, took

    jobs, took = asyncio.run(run())
    assert jobs.asked == [{"task_name": TASK, "seconds_since_heartbeat": 7.5}] * 4
    assert jobs.retried == ["taken-1", "a", "b"]
    assert took >= 4 * 0.05  # a pause before every round


@pytest.fixture
def pg_store(postgres_database: str) -> Iterator[Store]:
    with Store(postgres_database) as opened:
        yield opened


def jobs(store: Store) -> Counter[tuple[int, str, str]]:
    """Jobs in the queue by tournament, queue and status."""
    with store.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT (args->>'tournament_id')::int, queue_name, status::text "
                "FROM procrastinate_jobs"
            )
        )
        return Counter((int(t), str(q), str(s)) for t, q, s in rows)


async def open_queue(url: str) -> procrastinate.App:
    app = make_app(url)
    await app.open_async()
    await ensure_queue_schema(app)
    return app


def test_jobs_are_queued_where_their_tournament_is_played_and_moved_with_it(
    pg_store: Store, postgres_database: str
) -> None:
    pinned, _ = remote_tournament(pg_store, "w1", seed=1)
    shared, _ = remote_tournament(pg_store, None, seed=2)
    assert pinned.id is not None and shared.id is not None

    async def queue() -> list[int]:
        app = await open_queue(postgres_database)
        try:
            counts = [await queue_matches(app, pinned, [0, 1, 2])]
            counts.append(await queue_matches(app, shared, [4, 5]))
            counts.append(await queue_matches(app, shared, []))
            return counts
        finally:
            await app.close_async()

    assert asyncio.run(queue()) == [3, 2, 0]
    assert jobs(pg_store) == Counter(
        {(pinned.id, "worker:w1", "todo"): 3, (shared.id, "matches", "todo"): 2}
    )
    with pg_store.engine.connect() as connection:
        indices = connection.execute(
            text("SELECT (args->>'schedule_index')::int FROM procrastinate_jobs ORDER BY id")
        )
        assert [i for (i,) in indices] == [0, 1, 2, 4, 5]
    # One job held by a worker moves too (retried there if that worker stops).
    with pg_store.engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE procrastinate_jobs SET status = 'doing' WHERE id = "
                "(SELECT min(id) FROM procrastinate_jobs)"
            )
        )
    moved: Counter[str] = Counter()
    _, count = pg_store.pin_tournament(
        pinned.id, "w2", move_jobs(pinned.id, worker_queue("w2"), moved)
    )
    assert moved == Counter({"todo": 2, "doing": 1}) and count == 3
    assert jobs(pg_store) == Counter(
        {
            (pinned.id, "worker:w2", "todo"): 2,
            (pinned.id, "worker:w2", "doing"): 1,
            (shared.id, "matches", "todo"): 2,
        }
    )
    again: Counter[str] = Counter()
    _, count = pg_store.pin_tournament(
        pinned.id, "w2", move_jobs(pinned.id, worker_queue("w2"), again)
    )
    assert count == 0 and again == Counter()  # on that queue already: nothing moves


def test_a_worker_plays_its_queues_until_empty_and_leaves_other_workers_jobs(
    pg_store: Store, postgres_database: str, tmp_path: Path
) -> None:
    mine, tokens = remote_tournament(pg_store, "w", seed=5)
    # Bots of their own: those of `mine` are told Goodbye once it is finished.
    anyone, more = remote_tournament(pg_store, None, ("s1", "s2", "s3"), seed=6)
    theirs, _ = remote_tournament(pg_store, "other", seed=7)
    assert mine.id is not None and anyone.id is not None and theirs.id is not None
    remotes = Remotes({**tokens, **more})
    said: list[str] = []

    def listening(address: str) -> None:
        said.append(address)
        remotes.dial(address)

    async def run() -> int:
        app = await open_queue(postgres_database)
        try:
            await queue_matches(app, mine, [0, 1, 2, 3, 4, 5])
            await queue_matches(app, anyone, [0, 1])
            await queue_matches(app, theirs, [0])
        finally:
            await app.close_async()
        settings = WorkerSettings(
            "w", tmp_path, heartbeat_s=0.5, stalled_s=5, until_empty=True, port=0
        )
        try:
            return await asyncio.wait_for(
                run_worker(postgres_database, settings, NO_SANDBOX, listening), 120
            )
        finally:
            await remotes.close()

    played = asyncio.run(run())
    assert played == 8
    assert len(said) == 1 and said[0].startswith("127.0.0.1:")
    assert pg_store.get_tournament(mine.id).status == "finished"
    assert pg_store.tournament_status(anyone.id).finished == 2
    assert pg_store.tournament_status(theirs.id).finished == 0
    # Done jobs are deleted; the other worker's waits.
    assert jobs(pg_store) == Counter({(theirs.id, "worker:other", "todo"): 1})
    assert remotes.goodbyes() == {
        **dict.fromkeys(REMOTE, TOURNAMENT_FINISHED),
        # Not finished: kept until the worker stops.
        **dict.fromkeys(more, "server shutting down"),
    }


def test_a_worker_without_a_port_tells_nobody_and_stops_on_an_empty_queue(
    postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[bool] = []
    watched: list[tuple[float, float]] = []
    real_make_app = worker.make_app

    def make_app_spy(url: str, *, durable: bool = True) -> procrastinate.App:
        made.append(durable)
        return real_make_app(url, durable=durable)

    async def retry_stalled_spy(app: procrastinate.App, every_s: float, stalled_s: float) -> None:
        assert isinstance(app, procrastinate.App)
        watched.append((every_s, stalled_s))

    real_options = worker.worker_options
    players: list[MatchPlayer] = []

    def worker_options_spy(settings: WorkerSettings, player: MatchPlayer) -> WorkerOptions:
        players.append(player)
        return real_options(settings, player)

    real_arena = worker.worker_arena
    policies: list[SandboxPolicy] = []

    def worker_arena_spy(settings: WorkerSettings, store: Store, sandbox: SandboxPolicy) -> Arena:
        policies.append(sandbox)
        return real_arena(settings, store, sandbox)

    monkeypatch.setattr(worker, "make_app", make_app_spy)
    monkeypatch.setattr(worker, "retry_stalled", retry_stalled_spy)
    monkeypatch.setattr(worker, "worker_arena", worker_arena_spy)
    monkeypatch.setattr(worker, "worker_options", worker_options_spy)
    said: list[str] = []
    settings = WorkerSettings("w", tmp_path, heartbeat_s=0.25, stalled_s=3, until_empty=True)
    policy = SandboxPolicy(kind="none", code_cache=str(tmp_path / "code"))
    played = asyncio.run(
        asyncio.wait_for(run_worker(postgres_database, settings, policy, said.append), 60)
    )
    assert played == 0 and said == []
    assert policies == [policy]  # its managed bots are confined as the worker was told
    (player,) = players
    assert (player.log_dir, player.name, player.played) == (tmp_path, "w", 0)
    assert made == [False]  # a worker's queue changes skip the disk flush
    assert watched == [(0.25, 3)]


def test_a_queue_older_than_this_procrastinate_is_refused(postgres_database: str) -> None:
    async def ensure() -> None:
        app = make_app(postgres_database)
        async with app.open_async():
            await ensure_queue_schema(app)

    asyncio.run(ensure())  # made on first use, at the newest version
    asyncio.run(ensure())  # and found so
    import psycopg

    with psycopg.connect(conninfo(postgres_database)) as conn:
        row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
        assert row == (newest(),)
        conn.execute(f"UPDATE {VERSION_TABLE} SET version = '03.00.00_01_old'")
    with pytest.raises(QueueSchemaOutdatedError) as refused:
        asyncio.run(ensure())
    assert (refused.value.found, refused.value.newest) == ("03.00.00_01_old", newest())
    # A queue from before the version table (no row): at BASELINE.
    with psycopg.connect(conninfo(postgres_database)) as conn:
        conn.execute(f"DELETE FROM {VERSION_TABLE}")
    if newest() == BASELINE:
        asyncio.run(ensure())
    else:
        with pytest.raises(QueueSchemaOutdatedError) as old:
            asyncio.run(ensure())
        assert old.value.found == BASELINE
    assert str(refused.value) == (
        f"the task queue's schema is at procrastinate migration 03.00.00_01_old, this "
        f"cardshark needs {newest()}: run `cardshark db upgrade` with the same --db first"
    )
