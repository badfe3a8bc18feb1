"""`cardshark worker` processes on a real PostgreSQL: a tournament queued by `tournament
create` is played by several workers, recorded once per match and rated in schedule order as
one process would; a worker killed with -9 loses nothing; SIGTERM finishes the match first."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from server.workers.worker import WORKER_LOST
from tests.conftest import PG_SUPERUSER, _free_port, _pg_bindir
from tournaments.models import MatchStatus
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
SLOW_BOT = Path(__file__).parent / "bots" / "slow_bot.py"
HOUSE = [f"house:knaves:noise={n}" for n in ("0", "0.25", "0.5", "0.75", "1")]
FAST = ["--heartbeat", "0.5", "--stalled-after", "2"]


def cli(*args: str, db: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert run.returncode == 0, run.stdout + run.stderr
    return run


@contextmanager
def workers(
    db: str, tmp_path: Path, names: list[str]
) -> Iterator[dict[str, subprocess.Popen[str]]]:
    """Worker processes; any still running at the end is stopped with SIGTERM, then killed."""
    started: dict[str, subprocess.Popen[str]] = {}
    try:
        for name in names:
            started[name] = start_worker(db, tmp_path, name)
        yield started
    finally:
        for proc in started.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in started.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_worker(db: str, tmp_path: Path, name: str, *extra: str) -> subprocess.Popen[str]:
    log = (tmp_path / f"{name}.out").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", "worker", "--db", db, "--name", name]
        + ["--log-dir", str(tmp_path / "logs"), *FAST, *extra],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for(
    what: str,
    condition: Callable[[], bool],
    deadline_s: float = 240,
    procs: dict[str, subprocess.Popen[str]] | None = None,
) -> None:
    """Poll condition until it holds; fail at the deadline or when a worker process ends."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out after {deadline_s} s waiting for {what}")
        for name, proc in (procs or {}).items():
            if proc.poll() is not None and proc.returncode != -signal.SIGKILL:
                pytest.fail(f"worker {name} exited ({proc.returncode}) before {what}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout=120)


def descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def finished_by_index(store: Store, tid: int) -> Counter[int]:
    return Counter(
        m.schedule_index for m in store.matches(tid) if m.status == MatchStatus.FINISHED.value
    )


def ratings(store: Store) -> list[float]:
    """Every bot's mu, sigma and match count in bot order, flat (for pytest.approx)."""
    rows = sorted(store.ratings("knaves").items())
    return [x for _, r in rows for x in (r.mu, r.sigma, float(r.matches))]


def results(store: Store, tid: int) -> dict[int, tuple[list[int], Any]]:
    return {
        m.schedule_index: (m.seats, (m.result or {}).get("scores"))
        for m in store.matches(tid)
        if m.status == MatchStatus.FINISHED.value
    }


def create(db: str, bots: list[str], seed: int, *extra: str) -> int:
    out = cli(
        "tournament",
        "create",
        "knaves",
        "--bots",
        ",".join(bots),
        "--seed",
        str(seed),
        "--move-ms",
        "5000",
        *extra,
        db=db,
    ).stdout
    assert "queued" in out, out
    return int(out.split()[1].rstrip(":"))


def pinned_to(tmp_path: Path, name: str) -> str | None:
    """The core a worker said it is pinned to ("" when it said it is not), None before."""
    out = tmp_path / f"{name}.out"
    text = out.read_text() if out.exists() else ""
    if f"worker {name}: not pinned" in text:
        return ""
    if f"worker {name}: pinned to CPU " not in text:
        return None
    return text.split(f"worker {name}: pinned to CPU ")[1].split()[0]


def cores_of(pid: int) -> str:
    """A process's Cpus_allowed_list ("" once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""
    return next(
        line.split(":")[1].strip() for line in status.splitlines() if "allowed_list" in line
    )


def test_three_workers_play_a_60_match_tournament_as_one_process_would(
    postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARDSHARK_CPU_LOCKS", str(tmp_path / "cpus"))  # this test's claims
    cpus = sorted(os.sched_getaffinity(0))
    tid = create(postgres_database, HOUSE, 11)
    with Store(postgres_database) as store:
        assert store.tournament_status(tid).scheduled == 60
        with workers(postgres_database, tmp_path, ["w1", "w2", "w3"]) as procs:
            wait_for(
                "each worker to say where it runs",
                lambda: all(pinned_to(tmp_path, n) is not None for n in procs),
                procs=procs,
            )
            said = {n: pinned_to(tmp_path, n) for n in procs}
            # With --cpu auto (the default), each takes a core of its own while cores last.
            pinned = sorted(int(c) for c in said.values() if c)
            assert pinned == cpus[: len(procs)], said
            bots: dict[str, set[str]] = {n: set() for n in procs}

            def played_all() -> bool:
                for name, proc in procs.items():  # the bots run where their worker does
                    bots[name] |= {cores_of(pid) for pid in descendants(proc.pid)} - {""}
                return store.tournament_status(tid).finished == 60

            wait_for("60 recorded matches", played_all, procs=procs)
            # (A worker that happened to play no match has no bots to look at.)
            for name, proc in procs.items():
                expected = said[name] or cores_of(os.getpid())
                assert cores_of(proc.pid) == expected
                assert bots[name] <= {expected}, (name, bots)
            assert any(bots[n] == {c} for n, c in said.items() if c), bots
            codes = {name: stop(proc) for name, proc in procs.items()}
        assert codes == {"w1": 0, "w2": 0, "w3": 0}
        played = [
            int((tmp_path / f"{n}.out").read_text().split(" matches played")[0].split()[-1])
            for n in procs
        ]
        assert sum(played) == 60, played  # every match played once, by whichever worker
        assert finished_by_index(store, tid) == Counter(range(60))
        assert not [m for m in store.matches(tid) if m.status == MatchStatus.VOIDED.value]
        assert store.get_tournament(tid).status == "finished"
        live = ratings(store)
        distributed = results(store, tid)
        store.recompute("knaves")
        assert ratings(store) == pytest.approx(live, rel=1e-12)

    local = f"sqlite:///{tmp_path / 'one.db'}"
    Store(local).close()
    cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        ",".join(HOUSE),
        "--seed",
        "11",
        "--move-ms",
        "5000",
        db=local,
    )
    with Store(local) as one:
        (single,) = one.list_tournaments()
        assert single.id is not None
        assert results(one, single.id) == distributed
        assert ratings(one) == pytest.approx(live, rel=1e-9)


def slow_bots(db: str, count: int, slow_decisions: int | None = None) -> list[str]:
    """count bots that think 40 ms a decision (only for the first slow_decisions of each
    process, when given)."""
    names = [f"slow{i}" for i in range(count)]
    arg = "" if slow_decisions is None else f" {slow_decisions}"
    for name in names:
        cli("bot", "add", name, "--command", f"{sys.executable} {SLOW_BOT}{arg}", db=db)
    return names


def running_match(store: Store, tid: int) -> bool:
    return any(m.status == MatchStatus.RUNNING.value for m in store.matches(tid))


def test_a_worker_killed_mid_match_is_replaced_and_its_match_recorded_once(
    postgres_database: str, tmp_path: Path
) -> None:
    # slow for their first 100 decisions (a match's first ~12 s): the match in play when the
    # worker is killed is slow, the others are quick
    tid = create(postgres_database, slow_bots(postgres_database, 3, 100), 5)
    with (
        Store(postgres_database) as store,
        workers(postgres_database, tmp_path, ["doomed"]) as procs,
    ):
        doomed = procs["doomed"]
        seen: dict[str, Any] = {}

        def in_play() -> bool:
            running = [m for m in store.matches(tid) if m.status == MatchStatus.RUNNING.value]
            bots = descendants(doomed.pid)
            if running and len(bots) >= 3:  # a match in play, its three bots up
                seen.update(match=running[0], bots=bots)
                return True
            return False

        wait_for("a match in play", in_play, procs=procs)
        lost, bots = seen["match"], seen["bots"]
        doomed.kill()
        doomed.wait()
        wait_for("the dead worker's bots to go", lambda: not any(alive(p) for p in bots), 30)
        # Workers started late join and take over, the stalled match included.
        procs["late1"] = start_worker(postgres_database, tmp_path, "late1")
        procs["late2"] = start_worker(postgres_database, tmp_path, "late2")
        total = store.tournament_status(tid).scheduled
        wait_for("every match", lambda: store.tournament_status(tid).finished == total, procs=procs)
        assert finished_by_index(store, tid) == Counter(range(total))
        voided = [m for m in store.matches(tid) if m.status == MatchStatus.VOIDED.value]
        assert [(m.id, (m.result or {}).get("void_reason")) for m in voided] == [
            (lost.id, WORKER_LOST)
        ]
        live = ratings(store)
        assert set(live[2::3]) == {float(total)}  # three bots in every match, counted once
        store.recompute("knaves")
        assert ratings(store) == pytest.approx(live, rel=1e-12)


def test_sigterm_finishes_the_match_in_play_then_stops(
    postgres_database: str, tmp_path: Path
) -> None:
    tid = create(postgres_database, slow_bots(postgres_database, 3), 3)
    with Store(postgres_database) as store, workers(postgres_database, tmp_path, ["w"]) as procs:
        wait_for("a match in play", lambda: running_match(store, tid), procs=procs)
        (playing,) = [m for m in store.matches(tid) if m.status == MatchStatus.RUNNING.value]
        assert stop(procs["w"]) == 0
        assert store.get_match(playing.id or 0).status == MatchStatus.FINISHED.value
        assert not [m for m in store.matches(tid) if m.status == MatchStatus.VOIDED.value]
        status = store.tournament_status(tid)
        assert 0 < status.finished < status.scheduled  # it stopped: the rest wait in the queue
        assert os.path.exists(tmp_path / "w.out")


class Postgres:
    """A PostgreSQL server of this test's own, which the test may restart."""

    def __init__(self) -> None:
        self.bindir = _pg_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="cardshark-pg-restart-"))
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam(PG_SUPERUSER)
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", PG_SUPERUSER, "--"]
        self.port = _free_port()
        self.data = self.root / "data"
        initdb = [str(self.bindir / "initdb"), "-D", str(self.data), "-U", PG_SUPERUSER]
        self._run(*initdb, "-A", "trust", "--no-sync")
        self.pg_ctl("start")
        self.url = f"postgresql+psycopg://{PG_SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self.prefix, *command], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr

    def pg_ctl(self, action: str) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F"
        ctl = [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log")]
        self._run(*ctl, "-m", "fast", "-w", "-o", options, action)

    def close(self) -> None:
        self.pg_ctl("stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def own_postgres() -> Iterator[Postgres]:
    server = Postgres()
    try:
        yield server
    finally:
        server.close()


def test_a_database_restart_under_a_worker_loses_and_doubles_nothing(
    own_postgres: Postgres, tmp_path: Path
) -> None:
    db = own_postgres.url
    # slow for their first 100 decisions: the restart lands in the first match, the rest quick
    tid = create(db, slow_bots(db, 3, 100), 2)
    with Store(db) as store, workers(db, tmp_path, ["w"]) as procs:
        wait_for("a match in play", lambda: running_match(store, tid), procs=procs)
        own_postgres.pg_ctl("restart")
        total = store.tournament_status(tid).scheduled
        wait_for("every match", lambda: store.tournament_status(tid).finished == total, procs=procs)
        assert stop(procs["w"]) == 0
        assert finished_by_index(store, tid) == Counter(range(total))
        live = ratings(store)
        assert set(live[2::3]) == {float(total)}
        store.recompute("knaves")
        assert ratings(store) == pytest.approx(live, rel=1e-12)
        voided = [m for m in store.matches(tid) if m.status == MatchStatus.VOIDED.value]
    played = (tmp_path / "w.out").read_text().split(" matches played")[0].split()[-1]
    assert int(played) == total + len(voided)  # a voided attempt is played again, no more


def test_what_workers_cannot_play_is_refused_in_one_line(
    postgres_database: str, tmp_path: Path
) -> None:
    local = f"sqlite:///{tmp_path / 'one.db'}"
    Store(local).close()
    refused = cli("worker", db=local, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1
    assert "workers share a PostgreSQL database" in refused.stderr
    for bad, said in [("two", "bad --cpu 'two'; allowed: auto"), ("4096", "--cpu 4096: this")]:
        refused = cli("worker", "--cpu", bad, db=postgres_database, check=False)
        assert refused.returncode == 2 and refused.stdout == "", refused.stdout
        assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr

    # A remote bot connects to one worker: the tournament must name it (--worker).
    cli("db", "upgrade", db=postgres_database)  # procrastinate's tables: no job may appear
    cli("bot", "add", "remote1", db=postgres_database)
    names = ["remote1", *slow_bots(postgres_database, 2)]
    refused = cli(
        "tournament",
        "create",
        "knaves",
        "--bots",
        ",".join(names),
        db=postgres_database,
        check=False,
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "'remote1' is remote" in refused.stderr and "--worker NAME" in refused.stderr
    with Store(postgres_database) as store:
        assert store.list_tournaments() == []
        with store.engine.connect() as connection:
            jobs = connection.execute(text("SELECT count(*) FROM procrastinate_jobs"))
            assert jobs.scalar() == 0
