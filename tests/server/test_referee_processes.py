"""`tournament run --processes N`: the same rows at any N, and a referee process killed with
-9 mid-match voids that match, which is played again and rated once."""

from __future__ import annotations

import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from server.play.load import cores
from server.play.referee_pool import auto_processes
from tests.server.test_tournament_cli import ROOT, assert_complete_and_consistent
from tournaments.store import Store

EXAMPLES = ROOT / "clients" / "python" / "examples"
HANG_ONCE = ROOT / "tests" / "server" / "bots" / "hang_once.py"
KILLED = "server error: referee process"


def cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    """Run the cardshark command on the SQLite file db; fails the test unless it exits 0."""
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", f"sqlite:///{db}"],
        cwd=db.parent,  # its logs/
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def field(db: Path, fifo: Path) -> list[str]:
    """Two rule bots and two seeded ones (hang_once, with its mark already made: it never
    hangs here); the names."""
    fifo.with_name(fifo.name + ".mark").touch()
    bots = {
        "rules1": f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}",
        "rules2": f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}",
        "seeded1": f"{sys.executable} {HANG_ONCE} {fifo}",
        "seeded2": f"{sys.executable} {HANG_ONCE} {fifo}",
    }
    for name, command in bots.items():
        cli("bot", "add", name, "--command", command, db=db)
    return list(bots)


def knaves_run(names: list[str], *extra: str) -> list[str]:
    """The CLI's arguments for a Knaves round robin of names, unsandboxed."""
    return ["tournament", "run", "knaves", "--bots", ",".join(names), *extra,
            "--sandbox", "none"]  # fmt: skip


def per_process(line: str) -> list[int]:
    """The matches each referee process played, from a progress line."""
    return [int(n) for n in line.split("per process ")[1].split(",")[0].split("+")]


def stored_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What a tournament stored, without ids, times and move times: matches, seats, ratings
    and their history, by schedule index and bot name."""
    with sqlite3.connect(db) as con:
        matches = con.execute(
            "SELECT schedule_index, attempt, round, table_index, rotation, seed, seats, status, "
            "json_extract(result, '$.scores'), json_extract(record, '$.actions') "
            "FROM matches ORDER BY schedule_index, attempt"
        ).fetchall()
        seats = con.execute(
            "SELECT m.schedule_index, s.seat, b.name, s.score, s.rank, s.faults, s.forfeited "
            "FROM seat_results s JOIN matches m ON m.id = s.match_id JOIN bots b "
            "ON b.id = s.bot_id ORDER BY m.schedule_index, s.seat"
        ).fetchall()
        ratings = con.execute(
            "SELECT b.name, r.game, r.mu, r.sigma, r.matches, r.score_sum, r.faults "
            "FROM ratings r JOIN bots b ON b.id = r.bot_id ORDER BY b.name"
        ).fetchall()
        history = con.execute(
            "SELECT m.schedule_index, b.name, h.mu_before, h.sigma_before, h.mu_after, "
            "h.sigma_after FROM rating_history h JOIN matches m ON m.id = h.match_id "
            "JOIN bots b ON b.id = h.bot_id ORDER BY m.schedule_index, b.name"
        ).fetchall()
    return {"matches": matches, "seats": seats, "ratings": ratings, "history": history}


def test_one_two_and_three_referee_processes_store_the_same_rows(tmp_path: Path) -> None:
    stored = {}
    for processes in (1, 2, 3):
        db = tmp_path / f"p{processes}.db"
        names = field(db, tmp_path / f"fifo{processes}")
        args = ("--seed", "11", "--tables", "4", "--concurrency", "4")
        args += ("--processes", str(processes))
        run = cli(*knaves_run(names, *args), db=db)
        played = [line for line in run.stderr.splitlines() if "24/24 matches" in line]
        assert played, run.stderr
        if processes > 1:
            counts = per_process(played[-1])
            assert len(counts) == processes and sum(counts) == 24, played[-1]
            assert all(n > 0 for n in counts), f"a referee process played nothing: {played}"
        else:
            assert "per process" not in played[-1]
        stored[processes] = stored_rows(db)
        with Store(f"sqlite:///{db}") as store:
            assert_complete_and_consistent(store, 1)
    assert len(stored[1]["seats"]) == 24 * 3
    assert stored[2] == stored[1]
    assert stored[3] == stored[1]


def referee_of(pid: int) -> int:
    """The referee process a bot process runs under (its nearest such ancestor)."""
    while pid > 1:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"server.play.referee_process" in cmdline:
            return pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    raise AssertionError("the bot runs under no referee process")


def test_a_referee_process_killed_mid_match_voids_it_and_it_is_played_again(
    tmp_path: Path,
) -> None:
    run, db, bot = start_hanging_run(tmp_path)
    try:
        os.kill(referee_of(bot), signal.SIGKILL)
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, out + err
    assert "Standings of tournament 1" in out
    with Store(f"sqlite:///{db}") as store:
        assert_complete_and_consistent(store, 1)
        voided = [m for m in store.matches(1) if m.status == "voided"]
        assert voided, "the killed referee's match was not voided"
        for m in voided:
            reason = str((m.result or {}).get("void_reason", ""))
            assert KILLED in reason and f"was killed by signal {signal.SIGKILL}" in reason, reason
        finished = {m.schedule_index for m in store.matches(1) if m.status == "finished"}
        assert {m.schedule_index for m in voided} <= finished


def start_hanging_run(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, int]:
    """A --processes 2 run whose first decision hangs: the run, its database, and the pid of
    the bot that hangs, once it does."""
    db = tmp_path / "cs.db"
    fifo = tmp_path / "fifo"
    names = field(db, fifo)
    fifo.with_name(fifo.name + ".mark").unlink()
    os.mkfifo(fifo)
    listening = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    run = subprocess.Popen(
        [sys.executable, "-m", "server.cli"]
        + knaves_run(names, "--seed", "11", "--tables", "3", "--processes", "2")
        + ["--move-ms", "60000", "--db", f"sqlite:///{db}"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        readable: list[int] = []
        for _ in range(120):
            readable, _, _ = select.select([listening], [], [], 1)
            if readable or run.poll() is not None:
                break
        assert readable, f"no bot reached its first decision: {run.communicate()}"
        return run, db, int(os.read(listening, 64).split()[0])
    finally:
        os.close(listening)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_the_run_stopped_mid_match_takes_its_referee_processes_along_and_resumes(
    tmp_path: Path, how: signal.Signals
) -> None:
    run, db, bot = start_hanging_run(tmp_path)
    referees = [
        int(pid)
        for pid in Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()
        if b"server.play.referee_process" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert referee_of(bot) in referees and len(referees) == 2
    watches = [os.pidfd_open(pid) for pid in [*referees, bot]]
    try:
        os.kill(run.pid, how)
        out, err = run.communicate(timeout=120)
        # Each pidfd is readable once its process has exited.
        waiting = list(watches)
        while waiting:
            gone, _, _ = select.select(waiting, [], [], 60)
            assert gone, "a referee process or bot outlived the run"
            waiting = [w for w in waiting if w not in gone]
    finally:
        for watch in watches:
            os.close(watch)
        if run.poll() is None:
            run.kill()
    if how == signal.SIGINT:
        assert run.returncode == 130, out + err
        assert "interrupted by Ctrl-C" in err
    else:
        assert run.returncode == -signal.SIGKILL
    cli("tournament", "resume", "1", "--processes", "2", "--sandbox", "none", db=db)
    with Store(f"sqlite:///{db}") as store:
        assert_complete_and_consistent(store, 1)


def test_serve_plays_an_admin_tournament_in_its_referee_processes(tmp_path: Path) -> None:
    from cardshark.v1 import admin_pb2 as admin_pb
    from cardshark.v1 import admin_pb2_grpc
    from tests.server.test_admin import AUTH, TOKEN, start_serve

    proc, address = start_serve(
        tmp_path, "--processes", "2", "--sandbox", "none", env={"CARDSHARK_ADMIN_TOKEN": TOKEN}
    )
    try:
        with grpc.insecure_channel(address) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            names = []
            for i in range(3):
                command = f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}"
                request = admin_pb.AddBotRequest(name=f"b{i}", command=command)
                names.append(admin.AddBot(request, metadata=AUTH).bot.name)
            created = admin.CreateTournament(
                admin_pb.CreateTournamentRequest(game="knaves", bots=names, rounds=2, seed=3),
                metadata=AUTH,
            ).tournament
            updates = list(
                admin.RunTournament(
                    admin_pb.RunTournamentRequest(
                        tournament_id=created.tournament_id, concurrency=4
                    ),
                    metadata=AUTH,
                )
            )
        assert updates[-1].status == "finished" and updates[-1].finished == 12
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # Each referee process started its own copy of every bot, each with its own log.
    logs = tmp_path / "logs" / f"tournament-{created.tournament_id}"
    each = [f"b{i}.stderr.log" for i in range(3)]
    assert sorted(p.name for p in logs.glob("*.stderr.log")) == each
    assert sorted(p.name for p in (logs / "referee-1").iterdir()) == each
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        assert_complete_and_consistent(store, created.tournament_id)


def test_by_default_a_long_run_gets_a_process_per_200_matches_up_to_one_per_core(
    tmp_path: Path,
) -> None:
    assert [auto_processes(n) for n in (0, 1, 199, 399)] == [1, 1, 1, 1]
    assert auto_processes(400) == min(2, cores())
    assert auto_processes(100_000) == cores()
    db = tmp_path / "cs.db"
    names = field(db, tmp_path / "fifo")[:3]
    run = cli(*knaves_run(names, "--rounds", "67", "--seed", "3"), db=db)
    last = [line for line in run.stderr.splitlines() if "402/402 matches" in line][-1]
    if auto_processes(402) == 1:
        assert "per process" not in last
    else:
        counts = per_process(last)
        assert len(counts) == auto_processes(402) and sum(counts) == 402, last
    with Store(f"sqlite:///{db}") as store:
        assert_complete_and_consistent(store, 1)


FD_PROBE = ROOT / "tests" / "server" / "bots" / "fd_probe.py"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_bot_in_a_referee_process_holds_no_descriptor_of_its_referee(
    tmp_path: Path, sandbox: str
) -> None:
    db = tmp_path / "cs.db"
    names = ["probe1", "probe2", "probe3"]
    for name in names:
        cli("bot", "add", name, "--command", f"{sys.executable} {FD_PROBE}", db=db)
    args = ["--bots", ",".join(names), "--seed", "3", "--processes", "2", "--sandbox", sandbox]
    cli("tournament", "run", "knaves", *args, db=db)
    logs = sorted((tmp_path / "logs" / "tournament-1").rglob("*.stderr.log"))
    # each of the two referee processes started its own copy of every bot
    assert [p.relative_to(tmp_path / "logs" / "tournament-1").as_posix() for p in logs] == [
        "probe1.stderr.log", "probe2.stderr.log", "probe3.stderr.log",
        "referee-1/probe1.stderr.log", "referee-1/probe2.stderr.log",
        "referee-1/probe3.stderr.log",
    ]  # fmt: skip
    for log in logs:
        (seen,) = [line for line in log.read_text().splitlines() if line.startswith("FDS ")]
        # its stdio and its own socket to the referee: nothing of the run's channel
        assert re.fullmatch(r"FDS 0=/dev/null 1=/dev/null 2=pipe:\[\d+\] 3=socket:\[\d+\]", seen), (
            log,
            seen,
        )
