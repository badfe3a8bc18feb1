"""A ladder on workers: one scheduler (a PostgreSQL advisory lock elects it, a second one is
refused naming the first) queues a set at a time for two real `cardshark worker`s, and the
sets and ratings are those of the same ladder played by one process; a worker killed with -9
in the middle of a set loses nothing and doubles nothing; a scheduler that fails keeps its
error for `ladder status`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from server.play.ladder import LadderPlan
from server.workers.ladder_scheduler import LOCK_CLASS, LadderScheduler
from server.workers.worker import WORKER_LOST, make_app
from tests.server.test_ladder_cli import GAME, ROOT, cli, house, progress
from tests.server.test_workers import (
    alive,
    descendants,
    slow_bots,
    start_worker,
    wait_for,
    workers,
)
from tournaments.errors import TournamentError
from tournaments.store import Store

SEED = "13"
SETS = 4


Sets = dict[int, list[tuple[list[str], list[float]]]]


def played(db: str) -> tuple[Sets, dict[str, tuple[float, float]]]:
    """Per set, each match's seating and scores; and each bot's rating, by name."""
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None and ladder.id is not None
        names = {b.id: b.name for b in store.list_bots()}
        sets: Sets = {}
        for m in store.matches(ladder.id, include_voided=False):
            assert m.result is not None, f"match {m.id} of set {m.round} is {m.status}"
            sets.setdefault(m.round, []).append(([names[b] for b in m.seats], m.result["scores"]))
        ratings = {
            names[b]: (round(r.mu, 9), round(r.sigma, 9)) for b, r in store.ratings(GAME).items()
        }
    return sets, ratings


def test_two_workers_play_a_ladder_as_one_process_does(
    postgres_database: str, tmp_path: Path
) -> None:
    bots = ",".join(house(n) for n in (0.0, 0.3, 0.6, 1.0))
    alone = f"sqlite:///{tmp_path / 'alone.db'}"
    cli("ladder", "run", GAME, "--bots", bots, "--sets", str(SETS), "--seed", SEED, db=alone)
    db = postgres_database
    cli("db", "upgrade", db=db)
    with held_lock(db, "cardshark ladder scheduler on elsewhere pid 7"):
        refused = cli(
            "ladder", "run", GAME, "--bots", bots, "--seed", SEED, "--workers", db=db, code=2
        )
        assert "ladder 1 is scheduled by another process: cardshark ladder scheduler on " in refused
        assert "elsewhere pid 7" in refused
        status = cli("ladder", "status", GAME, db=db)
        assert "scheduled for workers by cardshark ladder scheduler on elsewhere pid 7" in status
    with workers(db, tmp_path, ["w1", "w2"]):
        out = cli("ladder", "run", GAME, "--sets", str(SETS), "--workers", db=db)
    assert progress(out) == [(k, SETS, 6 * k) for k in range(1, SETS + 1)], out
    assert f"ladder 1: played {SETS} sets, {6 * SETS} matches in " in out
    on_workers, alone_figures = played(db), played(alone)
    assert len(on_workers[0]) == SETS and all(len(s) == 6 for s in on_workers[0].values())
    assert on_workers == alone_figures


@contextmanager
def held_lock(db: str, name: str) -> Iterator[None]:
    """Hold ladder 1's scheduler lock from a session named `name`, as a scheduler would."""
    with Store(db) as store, store.engine.connect() as conn:
        conn.execute(text("SELECT set_config('application_name', :n, false)"), {"n": name})
        assert conn.execute(text("SELECT pg_try_advisory_lock(:c, 1)"), {"c": LOCK_CLASS}).scalar()
        yield


def test_a_scheduler_that_fails_says_so_in_one_line_and_ladder_status_shows_it(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    bots = ",".join(house(n) for n in (0.0, 0.5, 1.0))
    cli("ladder", "run", GAME, "--bots", bots, "--sets", "1", "--seed", SEED, db=db)
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None
        # the queue's database gone: an app that was never opened refuses every deferral
        app = make_app("postgresql://cardshark@127.0.0.1:1/gone")
        scheduler = LadderScheduler(store, ladder, app, LadderPlan(sets=1))
        with pytest.raises(TournamentError) as refused:
            asyncio.run(scheduler.run())
    said = "the scheduler stopped: AppNotOpen: App was not open."
    assert str(refused.value).startswith(f"ladder 1: {said}")
    status = cli("ladder", "status", GAME, db=db).splitlines()
    (line,) = [x for x in status if x.startswith("last error: ")]  # one line, however long
    assert f" UTC (no set completed since): {said}" in line, status


def test_a_worker_killed_mid_set_loses_no_set_and_rates_none_twice(
    postgres_database: str, tmp_path: Path
) -> None:
    db = postgres_database
    cli("db", "upgrade", db=db)
    # 40 ms for each bot process's first 100 decisions: the match the worker is killed in is
    # long enough for that (~12 s), and the set's other matches are quick
    bots = slow_bots(db, 3, 100)
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "ladder", "run", GAME, "--bots", ",".join(bots)]
        + ["--sets", "1", "--seed", SEED, "--move-ms", "5000", "--workers", "--db", db],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        with Store(db) as store, workers(db, tmp_path, ["doomed"]) as procs:
            doomed = procs["doomed"]
            seen: dict[str, Any] = {}

            def in_play() -> bool:
                ladder = store.latest_ladder(GAME)
                if ladder is None or ladder.id is None:
                    return False
                running = [m for m in store.pending_matches(ladder.id) if m.status == "running"]
                seated = descendants(doomed.pid)
                if running and len(seated) >= 3:  # a match of a set in play, its bots up
                    seen.update(match=running[0], bots=seated)
                    return True
                return False

            wait_for("a ladder match in play", in_play, procs=procs)
            lost, seated = seen["match"], seen["bots"]
            doomed.kill()
            doomed.wait()
            wait_for("the dead worker's bots to go", lambda: not any(alive(p) for p in seated), 30)
            procs["late"] = start_worker(db, tmp_path, "late")  # takes over, the lost match too
            out, _ = scheduler.communicate(timeout=300)
    finally:
        if scheduler.poll() is None:
            scheduler.kill()
            scheduler.wait()
    assert scheduler.returncode == 0, out
    assert "ladder 1: played 1 set, 6 matches in " in out, out
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None and ladder.id is not None and ladder.rounds == 1
        assert store.pending_matches(ladder.id) == []
        matches = store.matches(ladder.id)
        finished = Counter(m.schedule_index for m in matches if m.status == "finished")
        assert finished == Counter(range(6))  # every match of the set, each once
        voided = [
            (m.id, (m.result or {}).get("void_reason")) for m in matches if m.status == "voided"
        ]
        assert voided == [(lost.id, WORKER_LOST)]
        history = Counter(h.match_id for h in store.rating_history(GAME))
        assert sum(history.values()) == 3  # the set rated once, for its 3 bots
        live = {b: (r.mu, r.sigma) for b, r in store.ratings(GAME).items()}
        store.recompute(GAME)
        again = {b: (r.mu, r.sigma) for b, r in store.ratings(GAME).items()}
    assert again.keys() == live.keys()
    for bot, (mu, sigma) in live.items():
        assert again[bot] == pytest.approx((mu, sigma), rel=1e-12)
