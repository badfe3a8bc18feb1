"""A ladder on workers: one scheduler (a PostgreSQL advisory lock elects it, a second one is
refused naming the first) queues a set at a time for two real `cardshark worker`s, and the
sets and ratings are those of the same ladder played by one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.server.test_ladder_cli import GAME, ROOT, house, set_lines
from tests.server.test_workers import workers
from tournaments.store import Store

SEED = "13"
SETS = 4


def cli(*args: str, db: str, code: int = 0) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == code, run.stdout + run.stderr
    return run.stdout + run.stderr


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
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "ladder", "run", GAME, "--bots", bots, "--sets",
         str(SETS), "--seed", SEED, "--workers", "--db", db],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    with workers(db, tmp_path, ["w1", "w2"]):
        try:
            next(set_lines(scheduler))
            second = cli("ladder", "run", GAME, "--workers", db=db, code=2)
            assert "is scheduled by another process: cardshark ladder scheduler on " in second
            assert f"pid {scheduler.pid}" in second
            assert scheduler.wait(timeout=300) == 0
        finally:
            if scheduler.poll() is None:
                scheduler.kill()
    on_workers, alone_figures = played(db), played(alone)
    assert len(on_workers[0]) == SETS and all(len(s) == 6 for s in on_workers[0].values())
    assert on_workers == alone_figures
