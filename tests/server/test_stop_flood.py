"""The stop path survives a flood (issue 30): a managed bot that floods the referee in the last
match and stops reading, so that its stream is closed with data queued that flushes later, leaves
`tournament run`, `serve` and `worker` to exit 0 without a traceback, every match stored once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import grpc
from sqlalchemy import create_engine, text

from cardshark.v1 import admin_pb2 as pb
from cardshark.v1 import admin_pb2_grpc
from tests.server.test_admin import AUTH, TOKEN, start_serve

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "clients" / "python" / "examples" / "random_bot.py"
# knaves seats three: three bots and one round are one table in six rotations, each with the
# flooder; one match at a time makes its sixth match the tournament's last.
MATCHES = 6
BOTS = {
    "flooder": f"{sys.executable} {ROOT / 'tests' / 'server' / 'bots' / 'flood_last.py'} {MATCHES}",
    "rand1": f"{sys.executable} {RANDOM_BOT}",
    "rand2": f"{sys.executable} {RANDOM_BOT}",
}
SEED = 30


def cli(*args: str, db: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=cwd,  # the bots' logs go there
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_stored_once_with_the_flood_last(db: str) -> None:
    """The tournament finished; each scheduled match is stored once, finished, with a result
    for every seat; the flooder's faults are all in the last match played."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            ((tid, status),) = conn.execute(text("SELECT id, status FROM tournaments")).all()
            rows = conn.execute(
                text(
                    "SELECT id, schedule_index, status, record, finished FROM matches"
                    " WHERE tournament_id = :tid ORDER BY schedule_index"
                ),
                {"tid": tid},
            ).all()
            flooder = conn.execute(
                text(
                    "SELECT m.id, r.faults FROM seat_results r"
                    " JOIN matches m ON m.id = r.match_id JOIN bots b ON b.id = r.bot_id"
                    " WHERE m.tournament_id = :tid AND b.name = 'flooder'"
                ),
                {"tid": tid},
            )
            faults = {match_id: n for match_id, n in flooder}
            seat_rows = conn.execute(
                text(
                    "SELECT COUNT(*) FROM seat_results r JOIN matches m ON m.id = r.match_id"
                    " WHERE m.tournament_id = :tid"
                ),
                {"tid": tid},
            ).scalar_one()
    finally:
        engine.dispose()
    assert status == "finished"
    assert [row.schedule_index for row in rows] == list(range(MATCHES)), "a match twice or none"
    assert {row.status for row in rows} == {"finished"}
    records = [r.record if isinstance(r.record, dict) else json.loads(r.record) for r in rows]
    assert all(len(record["scores"]) == 3 for record in records)
    assert seat_rows == 3 * MATCHES
    last = max(rows, key=lambda row: str(row.finished)).id
    assert faults[last] > 100, faults  # the flood was there
    assert all(n == 0 for match_id, n in faults.items() if match_id != last), faults


def test_a_flood_in_the_last_match_leaves_tournament_run_exiting_0(tmp_path: Path) -> None:
    path = tmp_path / "cs.db"
    db = f"sqlite:///{path}"
    for name, command in BOTS.items():
        added = cli("bot", "add", name, "--command", command, db=db, cwd=tmp_path)
        assert added.returncode == 0, added.stdout + added.stderr
    run = cli(
        "tournament", "run", "knaves", "--bots", ",".join(BOTS), "--rounds", "1",
        "--concurrency", "1", "--seed", str(SEED), "--sandbox", "none",
        db=db, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Standings of tournament 1" in run.stdout
    assert_stored_once_with_the_flood_last(db)


def test_a_flood_in_the_last_match_leaves_serve_running_then_exiting_0(tmp_path: Path) -> None:
    proc, address = start_serve(tmp_path, "--sandbox", "none", env={"CARDSHARK_ADMIN_TOKEN": TOKEN})
    try:
        with grpc.insecure_channel(address) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            for name, command in BOTS.items():
                admin.AddBot(pb.AddBotRequest(name=name, command=command), metadata=AUTH)
            created = admin.CreateTournament(
                pb.CreateTournamentRequest(game="knaves", bots=list(BOTS), rounds=1, seed=SEED),
                metadata=AUTH,
            ).tournament
            run = pb.RunTournamentRequest(tournament_id=created.tournament_id, concurrency=1)
            updates = list(admin.RunTournament(run, metadata=AUTH, timeout=300))
        assert updates[-1].status == "finished" and updates[-1].finished == MATCHES
        assert proc.poll() is None, "serve ended with its tournament"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode == 0, err
    assert_stored_once_with_the_flood_last(f"sqlite:///{tmp_path / 'cs.db'}")


def test_a_flood_in_the_last_match_leaves_worker_exiting_0(
    postgres_database: str, tmp_path: Path
) -> None:
    db = postgres_database
    for name, command in BOTS.items():
        added = cli("bot", "add", name, "--command", command, db=db, cwd=tmp_path)
        assert added.returncode == 0, added.stdout + added.stderr
    created = cli(
        "tournament", "create", "knaves", "--bots", ",".join(BOTS), "--seed", str(SEED),
        db=db, cwd=tmp_path,
    )  # fmt: skip
    assert "queued" in created.stdout, created.stdout + created.stderr
    # One worker plays one match at a time: the flooder's sixth is the queue's last.
    run = cli(
        "worker", "--until-empty", "--sandbox", "none", "--cpu", "none", "--name", "w",
        db=db, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in run.stderr + run.stdout, run.stdout + run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    assert_stored_once_with_the_flood_last(db)
