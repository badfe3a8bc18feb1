"""The cardshark command end to end: round robins with real bot processes, kill -9 and
resume on SQLite and PostgreSQL, concurrency without lost rating updates, clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

import pytest

from games.registry import get_game
from tournaments.models import MatchStatus
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
BOTS = {
    "rules": f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}",
    "rand1": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
    "rand2": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
    "rand3": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
}


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


def register(db: str) -> None:
    for name, command in BOTS.items():
        out = cli("bot", "add", name, "--command", command, db=db).stdout
        assert len([line for line in out.splitlines() if line.startswith("token: ")]) == 1


def ratings_snapshot(store: Store, game: str) -> dict[int, tuple[float, float, int]]:
    return {b: (r.mu, r.sigma, r.matches) for b, r in store.ratings(game).items()}


def assert_complete_and_consistent(store: Store, tournament_id: int) -> None:
    """Every scheduled match finished exactly once, replays to its result, ratings recompute."""
    tournament = store.get_tournament(tournament_id)
    matches = store.matches(tournament_id)
    finished = [m for m in matches if m.status == MatchStatus.FINISHED.value]
    indices = [m.schedule_index for m in finished]
    assert len(indices) == len(set(indices)), "a match was recorded twice"
    status = store.tournament_status(tournament_id)
    assert sorted(indices) == list(range(status.scheduled))
    assert all(m.status in (MatchStatus.FINISHED.value, MatchStatus.VOIDED.value) for m in matches)
    game = get_game(tournament.game)
    for m in finished:
        assert m.record is not None and m.result is not None
        state = game.replay(m.seed, len(m.seats), tournament.options, m.record["actions"])
        assert [float(s) for s in game.result(state).scores] == m.result["scores"]
        assert len(store.seat_results(m.id or 0)) == len(m.seats)
    live = ratings_snapshot(store, tournament.game)
    assert sum(n for _, _, n in live.values()) == len(finished) * tournament.seats
    store.recompute(tournament.game)
    assert ratings_snapshot(store, tournament.game) == live, "live ratings differ from recompute"


def test_round_robin_with_real_bots_ranks_the_rule_bot_first(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    run = cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        ",".join(BOTS),
        "--rounds",
        "3",
        "--concurrency",
        "4",
        "--seed",
        "7",
        db=db,
    )
    assert "Standings of tournament 1" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1].startswith("more: cardshark tournament show 1 ")
    with Store(db) as store:
        (tournament,) = store.list_tournaments()
        assert tournament.id is not None
        assert store.tournament_status(tournament.id).scheduled == 72
        assert_complete_and_consistent(store, tournament.id)
        rows = store.rankings("knaves")
        assert rows[0].bot == "rules" and rows[0].matches == 54
        intervals = [
            (m.started, m.finished)
            for m in store.matches(tournament.id)
            if m.started and m.finished
        ]
        overlap = max(sum(1 for s, f in intervals if s <= start < f) for start, _ in intervals)
        assert overlap >= 3, "matches did not run concurrently"
        for a, b in combinations(store.matches(tournament.id), 2):
            if (a.round, a.table_index) == (b.round, b.table_index):
                assert a.seed == b.seed  # duplicate: rotations share the deals
    assert "rules" in cli("rankings", "knaves", "--json", db=db).stdout


@pytest.mark.parametrize("kill_after", [3])
def test_kill_9_then_resume_plays_only_what_was_unfinished(
    db_url: str, tmp_path: Path, kill_after: int
) -> None:
    register(db_url)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "tournament",
            "run",
            "knaves",
            "--bots",
            ",".join(BOTS),
            "--rounds",
            "2",
            "--concurrency",
            "2",
            "--db",
            db_url,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with Store(db_url) as store:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            tournaments = store.list_tournaments()
            if (
                tournaments
                and store.tournament_status(tournaments[0].id or 0).finished >= kill_after
            ):
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        (tournament,) = store.list_tournaments()
        assert tournament.id is not None
        before = store.tournament_status(tournament.id)
        assert kill_after <= before.finished < before.scheduled
        finished_before = {
            m.schedule_index: m.id
            for m in store.matches(tournament.id)
            if m.status == MatchStatus.FINISHED.value
        }
    cli("tournament", "resume", str(tournament.id), db=db_url)
    with Store(db_url) as store:
        assert_complete_and_consistent(store, tournament.id)
        after = {
            m.schedule_index: m.id
            for m in store.matches(tournament.id)
            if m.status == MatchStatus.FINISHED.value
        }
        for index, match_id in finished_before.items():
            assert after[index] == match_id, "a finished match was played again"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["rankings", "chess"], "unknown game 'chess'"),
        (["tournament", "run", "knaves", "--bots", "rules,ghost,rand1"], "no bot 'ghost'"),
        (["tournament", "run", "knaves", "--bots", "rules,rand1"], "2 entrants"),
        (
            [
                "tournament",
                "run",
                "kill",
                "--bots",
                "rules,rand1,rand2,rand3",
                "--option",
                "target=99",
            ],
            "'target': 99",
        ),
        (
            ["tournament", "run", "kill", "--bots", "rules,rand1,rand2,rand3", "--option", "x"],
            "NAME=VALUE",
        ),
        (["tournament", "status", "42"], "42"),
        (["match", "show", "999"], "999"),
        (["bot", "add", "bad name"], "bad name"),
    ],
)
def test_cli_errors_are_one_clear_line(tmp_path: Path, args: list[str], needle: str) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    if args[:2] != ["bot", "add"]:
        register(db)  # read-only commands refuse a missing database before anything else
    run = cli(*args, db=db, check=False)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), run.stderr
    assert needle in lines[0]
    assert "Traceback" not in run.stdout + run.stderr


def test_unreachable_database_is_one_clear_line() -> None:
    run = cli("rankings", "knaves", db="postgresql+psycopg://nobody@127.0.0.1:1/none", check=False)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "unavailable" in run.stderr


def test_match_show_is_a_readable_transcript(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    cli("tournament", "run", "knaves", "--bots", "rules,rand1,rand2", "--seed", "2", db=db)
    with Store(db) as store:
        match = store.matches(store.list_tournaments()[0].id or 0)[0]
        names = store.match_detail(match.id or 0).bot_names
    out = cli("match", "show", str(match.id), db=db).stdout
    first_card = (match.record or {})["actions"][0].removeprefix("play:")
    assert f"seed {match.seed}" in out
    assert first_card in out and "hand 1 ended: points (running score)" in out
    assert all(name in out for name in names.values())
    scores = (match.result or {})["scores"]
    assert (
        out.rstrip().splitlines()[-1].startswith(f"result: {names[match.seats[0]]} {scores[0]:g}")
    )
    steps = cli("match", "show", str(match.id), "--steps", db=db).stdout
    assert (match.record or {})["actions"][0] in steps and "hand 1 ended: scores" in steps


def test_a_remote_bot_plays_with_its_token(tmp_path: Path) -> None:
    """A bot the server does not start: registered without a command, dials in itself."""
    import json

    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    token = json.loads(cli("bot", "add", "remote", "--json", db=db).stdout)["token"]
    port = free_port()
    bot = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLES / "random_bot.py"),
            "--server",
            f"127.0.0.1:{port}",
            "--token",
            token,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        run = cli(
            "tournament",
            "run",
            "knaves",
            "--bots",
            "remote,rules,rand1",
            "--port",
            str(port),
            db=db,
        )
    finally:
        bot.kill()
        bot.wait()
    assert f"remote bots remote: start them with --server 127.0.0.1:{port}" in run.stdout
    with Store(db) as store:
        rows = {r.bot: r for r in store.rankings("knaves")}
        assert rows["remote"].matches == 6 and rows["remote"].faults == 0


def free_port() -> int:
    """A port that was free a moment ago."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_busy_referee_port_is_one_clear_line(tmp_path: Path) -> None:
    import socket

    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        run = cli(
            "tournament",
            "run",
            "knaves",
            "--bots",
            "rules,rand1,rand2",
            "--port",
            port,
            db=db,
            check=False,
        )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port} for remote bots: port {port} is in use "
        "(another program, or another cardshark serve, tournament or bot test); "
        "choose another with --port PORT and start them with --server HOST:PORT"
    ]
    with Store(db) as store:
        assert store.list_tournaments() == []  # refused before anything was stored


def test_create_only_then_resume_then_replay_detects_a_tampered_record(tmp_path: Path) -> None:
    from sqlmodel import Session

    from tournaments.models import Match

    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    out = cli(
        "tournament", "run", "knaves", "--bots", "rules,rand1,rand2", "--create-only", db=db
    ).stdout
    assert "6 matches" in out and "tournament resume 1" in out
    with Store(db) as store:
        assert store.tournament_status(1).finished == 0
    cli("tournament", "resume", "1", db=db)
    with Store(db) as store:
        assert store.tournament_status(1).finished == 6
        match_id = store.matches(1)[0].id or 0
    assert "replay to the stored scores" in cli("match", "replay", str(match_id), db=db).stdout
    with Store(db) as store, Session(store.engine) as session:
        row = session.get(Match, match_id)
        assert row is not None and row.result is not None
        row.result = {**row.result, "scores": [99.0, 0.0, 0.0]}
        session.add(row)
        session.commit()
    run = cli("match", "replay", str(match_id), db=db, check=False)
    assert run.returncode == 2 and "but [99.0, 0.0, 0.0] is stored" in run.stderr


def test_gauntlet_pits_the_first_bot_against_the_field(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    register(db)
    out = cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        "rules,rand1,rand2,rand3",
        "--gauntlet",
        "--create-only",
        db=db,
    ).stdout
    assert "18 matches" in out  # the challenger's 3 tables, 6 seatings each
    bad = cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        "rules,rand1,rand2,rand3",
        "--gauntlet",
        "--tables",
        "2",
        db=db,
        check=False,
    )
    assert bad.returncode == 2 and "gauntlet" in bad.stderr
    cli("tournament", "resume", "1", db=db)
    with Store(db) as store:
        rules = store.get_bot("rules").id
        matches = store.matches(1)
        assert store.get_tournament(1).format == "gauntlet"
        assert len(matches) == 18 and all(rules in m.seats for m in matches)
        assert_complete_and_consistent(store, 1)


def test_demo_uses_the_embedded_sqlite_default_and_ends_with_rankings(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "demo", "--rounds", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "cardshark.db").exists()
    table = run.stdout[run.stdout.index("Standings of tournament 1") :]
    first_row = [line for line in table.splitlines() if line.startswith("│")][0]
    assert "demo-rules-knaves" in first_row
    *_, show, serve = run.stdout.rstrip().splitlines()
    assert show.startswith("next: cardshark tournament show 1 ")
    assert serve.split() == [
        "cardshark",
        "serve",
        "(then",
        "open",
        "http://127.0.0.1:8080/tournaments/1)",
    ]
    with Store(f"sqlite:///{tmp_path / 'cardshark.db'}") as store:
        assert store.tournament_status(1).finished == 24
