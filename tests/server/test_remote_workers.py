"""Remote bots on workers (real PostgreSQL, worker processes and bot processes over gRPC on
127.0.0.1): a tournament created with --worker NAME is queued on that worker's own queue and
played only there, with the remote bots that dial its --port; other workers never take it."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text

from tests.conftest import _free_port
from tests.server.conftest import RANDOM_BOT
from tests.server.test_workers import (
    HOUSE,
    cli,
    create,
    finished_by_index,
    start_worker,
    stop,
    wait_for,
    workers,
)
from tournaments.models import Match, MatchStatus
from tournaments.store import Store

FAR = "far"  # the remote bot


def add_remote(db: str, name: str = FAR) -> str:
    """Register a remote bot (no command); returns its token."""
    token = json.loads(cli("bot", "add", name, "--json", db=db).stdout)["token"]
    assert isinstance(token, str)
    return token


@contextmanager
def remote_bot(address: str, token: str, err: Path) -> Iterator[subprocess.Popen[str]]:
    """The Python SDK's random bot, its own process dialing address; killed at the end."""
    env = dict(os.environ, CARDSHARK_SERVER=address, CARDSHARK_TOKEN=token)
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            RANDOM_BOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def listening(tmp_path: Path, name: str) -> bool:
    """True once the worker has said where remote bots dial it."""
    out = tmp_path / f"{name}.out"
    return out.exists() and f"worker {name}: remote bots dial" in out.read_text()


def played(tmp_path: Path, name: str) -> int:
    """How many matches a stopped worker says it played."""
    return int((tmp_path / f"{name}.out").read_text().split(" matches played")[0].split()[-1])


def queues(store: Store, tid: int) -> Counter[tuple[str, str, int]]:
    """The tournament's jobs in procrastinate's table, by queue, status and attempts (a job
    a worker took and failed counts one)."""
    with store.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT queue_name, status::text, attempts FROM procrastinate_jobs "
                "WHERE (args->>'tournament_id')::int = :tid"
            ),
            {"tid": tid},
        )
        return Counter((str(q), str(s), int(a)) for q, s, a in rows)


def faults(match: Match, seat_bot: int) -> list[dict[str, Any]]:
    """The faults a recorded match charged to the seat(s) of one bot."""
    record = match.record or {}
    seats = [i for i, b in enumerate(match.seats) if b == seat_bot]
    return [f for f in record.get("faults", []) if f["seat"] in seats]


def recorded(store: Store, tid: int) -> list[Match]:
    return [m for m in store.matches(tid) if m.status == MatchStatus.FINISHED.value]


def test_a_tournament_with_a_remote_bot_is_played_by_the_worker_it_dials(
    postgres_database: str, tmp_path: Path
) -> None:
    db = postgres_database
    token = add_remote(db)
    tid = create(db, [*HOUSE[:2], FAR], 21, "--worker", "w1")
    port = _free_port()
    with Store(db) as store:
        far = store.find_bot_by_token(token)
        assert far is not None and far.id is not None
        assert store.get_tournament(tid).worker == "w1"
        total = store.tournament_status(tid).scheduled
        assert queues(store, tid) == Counter({("worker:w1", "todo", 0): total})
        with workers(db, tmp_path, []) as procs:
            # w2 is up first and takes jobs all along; none of these is its to take.
            procs["w2"] = start_worker(db, tmp_path, "w2", "--port", "0")
            wait_for("w2 to listen", lambda: listening(tmp_path, "w2"), procs=procs)
            procs["w1"] = start_worker(db, tmp_path, "w1", "--port", str(port))
            wait_for("w1 to listen", lambda: listening(tmp_path, "w1"), procs=procs)
            with remote_bot(f"127.0.0.1:{port}", token, tmp_path / "far.err") as bot:
                wait_for(
                    "every match",
                    lambda: store.tournament_status(tid).finished == total,
                    procs=procs,
                )
                # w1 lets the bot go once the tournament is finished: Goodbye, exit 0.
                wait_for("the remote bot to exit", lambda: bot.poll() is not None, 60)
                assert bot.returncode == 0
            codes = {name: stop(proc) for name, proc in procs.items()}
        assert codes == {"w1": 0, "w2": 0}
        assert "tournament finished; nothing more to play" in (tmp_path / "far.err").read_text()
        assert (played(tmp_path, "w1"), played(tmp_path, "w2")) == (total, 0)
        assert finished_by_index(store, tid) == Counter(range(total))
        assert not [m for m in store.matches(tid) if m.status == MatchStatus.VOIDED.value]
        for match in recorded(store, tid):
            record = match.record or {}
            seat = match.seats.index(far.id)
            assert not [f for f in faults(match, far.id) if f["kind"] == "no_show"], record
            assert record["forfeited"][seat] is False and record["actions"], record
            assert isinstance(record["scores"][seat], int)


def test_remote_bots_reach_only_the_worker_they_dial(
    postgres_database: str, tmp_path: Path
) -> None:
    db = postgres_database
    token = add_remote(db)
    pinned = create(db, [*HOUSE[:2], FAR], 22, "--worker", "w1")
    shared = create(db, HOUSE[2:], 23)  # deferred after the pinned jobs, to the shared queue
    # The organizer sees who plays each: in the list, the status and the result.
    listed = {
        t["id"]: t["worker"] for t in json.loads(cli("tournament", "list", "--json", db=db).stdout)
    }
    assert (listed[pinned], listed[shared]) == ("w1", None)
    status = cli("tournament", "status", str(pinned), db=db).stdout
    assert "played by: worker w1" in status
    assert "played by: any" in cli("tournament", "status", str(shared), db=db).stdout
    shown = json.loads(cli("tournament", "show", str(pinned), "--json", db=db).stdout)
    assert shown["tournament"]["worker"] == "w1"
    assert "played by worker w1" in cli("tournament", "show", str(pinned), db=db).stdout
    port2, port1 = _free_port(), _free_port()
    with Store(db) as store, workers(db, tmp_path, []) as procs:
        far = store.find_bot_by_token(token)
        assert far is not None and far.id is not None
        procs["w2"] = start_worker(db, tmp_path, "w2", "--port", str(port2))
        wait_for("w2 to listen", lambda: listening(tmp_path, "w2"), procs=procs)
        # A token no bot has is refused at once, in one line; the bot does not retry.
        with remote_bot(f"127.0.0.1:{port2}", "not-a-token", tmp_path / "bad.err") as bad:
            wait_for("the unknown token to be refused", lambda: bad.poll() is not None, 60)
            assert bad.returncode == 2
        assert "refused by" in (tmp_path / "bad.err").read_text()
        with remote_bot(f"127.0.0.1:{port2}", token, tmp_path / "far.err") as bot:
            # w2 plays the shared queue's tournament, whose jobs came after the pinned ones:
            # it fetched past them, so w1's are not in any queue it takes from.
            total = store.tournament_status(shared).scheduled
            wait_for(
                "w2 to play the shared tournament",
                lambda: store.tournament_status(shared).finished == total,
                procs=procs,
            )
            waiting = store.tournament_status(pinned).scheduled
            assert store.tournament_status(pinned).finished == 0
            assert not [m for m in store.matches(pinned) if m.status != MatchStatus.PENDING.value]
            assert queues(store, pinned) == Counter({("worker:w1", "todo", 0): waiting})
            # w1 comes, its remote bot is connected to w2: w1's referee waits the no-show
            # grace (10 s), then the bot's seat is charged a no-show and forfeits.
            procs["w1"] = start_worker(db, tmp_path, "w1", "--port", str(port1))
            wait_for(
                "w1 to record a match",
                lambda: store.tournament_status(pinned).finished > 0,
                120,
                procs=procs,
            )
            assert stop(procs["w1"]) == 0  # finishes the match in play, then stops
            assert bot.poll() is None  # still connected to w2, which never held it
        first = recorded(store, pinned)[0]
        charged = faults(first, far.id)
        assert [f["kind"] for f in charged] == ["no_show"], first.record
        assert "did not connect within 10 s" in charged[0]["detail"]
        seat = first.seats.index(far.id)
        assert (first.record or {})["forfeited"][seat] is True
        assert played(tmp_path, "w1") == len(recorded(store, pinned))


def test_a_tournament_moves_to_another_worker_with_its_waiting_matches(
    postgres_database: str, tmp_path: Path
) -> None:
    db = postgres_database
    add_remote(db)
    pinned = create(db, [*HOUSE[:2], FAR], 24, "--worker", "w1")
    tid = create(db, HOUSE[:3], 25, "--worker", "w1")
    with Store(db) as store:
        total = store.tournament_status(tid).scheduled
        # One of w1's jobs is in play there when w1 is lost: it moves too, to be retried.
        with store.engine.begin() as connection:
            connection.execute(
                text(
                    "UPDATE procrastinate_jobs SET status = 'doing' WHERE id = (SELECT min(id) "
                    "FROM procrastinate_jobs WHERE (args->>'tournament_id')::int = :tid)"
                ),
                {"tid": tid},
            )
        out = cli("tournament", "move", str(tid), "--worker", "w2", db=db).stdout.splitlines()
        assert out[0] == (
            f"tournament {tid}: played by worker w2 from now on (before: worker w1); "
            f"{total - 1} waiting matches moved to it"
        )
        assert out[1].startswith("1 in play on worker w1: finished there, or, if that worker")
        assert store.get_tournament(tid).worker == "w2"
        assert queues(store, tid) == Counter(
            {("worker:w2", "todo", 0): total - 1, ("worker:w2", "doing", 0): 1}
        )
        with store.engine.begin() as connection:  # as a retry of the lost job would
            connection.execute(
                text(
                    "UPDATE procrastinate_jobs SET status = 'todo' WHERE status = 'doing' "
                    "AND (args->>'tournament_id')::int = :tid"
                ),
                {"tid": tid},
            )
        with workers(db, tmp_path, ["w2"]) as procs:
            wait_for(
                "w2 to play every match",
                lambda: store.tournament_status(tid).finished == total,
                procs=procs,
            )
            assert stop(procs["w2"]) == 0
        assert played(tmp_path, "w2") == total
        assert finished_by_index(store, tid) == Counter(range(total))
        assert queues(store, pinned) == Counter(
            {("worker:w1", "todo", 0): store.tournament_status(pinned).scheduled}
        )  # the other tournament stayed where it was

    refused = [
        (["--any"], pinned, "remote bot 'far' can play only on the worker they dial"),
        ([], pinned, "give --worker NAME (the worker that plays it from now on) or --any"),
        (["--worker", " "], pinned, "--worker needs a worker's name"),
        (["--worker", "w2"], tid, f"tournament {tid} is finished: nothing left to play"),
        (["--worker", "w2"], 999, "no tournament 999"),
    ]
    for args, which, said in refused:
        run = cli("tournament", "move", str(which), *args, db=db, check=False)
        assert (run.returncode, run.stdout) == (2, ""), run.stderr
        assert run.stderr.startswith(f"error: {said}"), run.stderr
    moved = cli("tournament", "move", str(pinned), "--worker", "w2", db=db).stdout
    assert moved.splitlines()[-1] == "remote bot far: dial worker w2 now (its --port)"


def test_moving_a_tournament_needs_the_shared_database(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'local.db'}"
    out = cli("tournament", "create", "knaves", "--bots", ",".join(HOUSE[:3]), db=db).stdout
    tid = int(out.split(":")[0].split()[-1])
    run = cli("tournament", "move", str(tid), "--worker", "w2", db=db, check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(
        "error: workers share a PostgreSQL database, and this one is sqlite: "
        f"`cardshark tournament resume {tid}` plays it here"
    ), run.stderr
