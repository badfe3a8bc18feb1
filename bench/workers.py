"""Matches per second with 1 and 2 `cardshark worker` processes on the same tournament, the
ratio, and procrastinate's overhead per job.

    .venv/bin/python bench/workers.py [--server postgresql+psycopg://USER@HOST:PORT]

Without --server a throwaway PostgreSQL is started from Debian's binaries (as the tests do).
Each run gets a fresh database: the same 5 light house bots, the same Knaves tournament
(seed 1, 60 matches a round, --rounds 5 by default), queued by `tournament create` and played
by N workers started with --until-empty (and --cpu, default auto: a core each); --repeat
pairs of runs, the ratio their median.
matches/s is counted from the first match's start to the last one's finish,
as stored. The queue overhead is procrastinate alone: no-op jobs deferred and run by one
worker in this process, wall time per job.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import procrastinate
import psycopg
from procrastinate.types import JSONDict

from server.workers.worker import queue_connector
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOTS = ",".join(f"house:knaves:noise={n}" for n in ("0", "0.25", "0.5", "0.75", "1"))


@contextmanager
def postgres(fsync: bool = True) -> Iterator[str]:
    """A throwaway PostgreSQL server; yields its base URL."""
    bindirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    if not bindirs:
        sys.exit("no PostgreSQL binaries: apt-get install postgresql, or give --server")
    bindir = bindirs[0]
    root = Path(tempfile.mkdtemp(prefix="cardshark-bench-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    subprocess.run(
        [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"],
        check=True,
        capture_output=True,
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = f"-h 127.0.0.1 -p {port} -k {root} -c max_connections=200"
    if not fsync:  # commits cost no disk flush: what is left is CPU and round trips
        options += " -F -c synchronous_commit=off"
    ctl = [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log")]
    subprocess.run([*ctl, "-w", "-o", options, "start"], check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*ctl, "-m", "fast", "-w", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = server.replace("postgresql+psycopg://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def cardshark(*args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args], cwd=ROOT, capture_output=True, text=True
    )
    if run.returncode != 0:
        sys.exit(f"cardshark {' '.join(args)} failed:\n{run.stdout}{run.stderr}")
    return run


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (every core, every process: /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def matches_per_second(
    server: str, workers: int, logs: Path, rounds: int = 1, cpu: str = "auto"
) -> tuple[float, int, float]:
    """matches/s of `workers` workers on a fresh tournament, the matches, and the cores the
    machine kept busy meanwhile (workers, bots and PostgreSQL together)."""
    db = fresh_database(server)
    create = ("tournament", "create", "knaves", "--bots", BOTS, "--seed", "1")
    create += ("--rounds", str(rounds))
    cardshark(*create, "--move-ms", "5000", "--db", db)
    busy, began = busy_seconds(), time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "server.cli", "worker", "--db", db, "--until-empty"]
            + ["--name", f"bench{n}", "--log-dir", str(logs), "--cpu", cpu],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        for n in range(workers)
    ]
    for proc in procs:
        if proc.wait() != 0:
            sys.exit(f"a worker exited with {proc.returncode}")
    cores = (busy_seconds() - busy) / (time.perf_counter() - began)
    with Store(db) as store:
        (tournament,) = store.list_tournaments()
        assert tournament.id is not None
        played = [m for m in store.matches(tournament.id) if m.status == "finished"]
    starts = [m.started for m in played if m.started is not None]
    ends = [m.finished for m in played if m.finished is not None]
    seconds = (max(ends) - min(starts)).total_seconds()
    return len(played) / seconds, len(played), cores


async def noop(n: int) -> None:
    """A job that does nothing: what is left is the queue's own cost."""


async def queue_overhead_ms(server: str, jobs: int) -> float:
    db = fresh_database(server)
    Store(db).close()
    # The connector a worker uses (its own queue changes are not flushed to disk).
    app = procrastinate.App(connector=queue_connector(db, durable=False))
    task = app.task(name="bench:noop", queue="bench")(noop)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        batch: list[JSONDict] = [{"n": n} for n in range(jobs)]
        await task.batch_defer_async(*batch)
        began = time.perf_counter()
        await app.run_worker_async(
            queues=["bench"], wait=False, concurrency=1, delete_jobs="successful"
        )
        return (time.perf_counter() - began) * 1000 / jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="PostgreSQL base URL (default: start a throwaway one)")
    parser.add_argument("--jobs", type=int, default=500, help="no-op jobs for the overhead")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the tournament (60 each)")
    parser.add_argument("--repeat", type=int, default=3, help="1-and-2-worker pairs to run")
    parser.add_argument(
        "--cpu",
        default="auto",
        help="each worker's --cpu: auto (a core each, the default) or none (unpinned)",
    )
    parser.add_argument(
        "--no-fsync", action="store_true", help="the throwaway server flushes no commit to disk"
    )
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as logs,
        contextmanager(lambda: iter([args.server]))()
        if args.server
        else postgres(not args.no_fsync) as server,
    ):
        ratios = []
        for n in range(args.repeat):
            one, count, one_cores = matches_per_second(server, 1, Path(logs), args.rounds, args.cpu)
            two, _, two_cores = matches_per_second(server, 2, Path(logs), args.rounds, args.cpu)
            ratios.append(two / one)
            print(
                f"run {n + 1}: 1 worker {one:6.2f} matches/s ({one_cores:.2f} cores busy), "
                f"2 workers {two:6.2f} matches/s ({two_cores:.2f} cores busy), "
                f"{count} matches: {two / one:.2f}x"
            )
        print(f"ratio:     {statistics.median(ratios):6.2f}x on {os.cpu_count()} cores (median)")
        overhead = asyncio.run(queue_overhead_ms(server, args.jobs))
        print(f"queue overhead: {overhead:.2f} ms per job (procrastinate fetch and finish)")


if __name__ == "__main__":
    main()
