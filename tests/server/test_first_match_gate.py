"""Before the first match: remote bots are waited for, never rated for the organizer's
timing, and a bot whose Hello names other games is refused with one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from tournaments.models import MatchStatus
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
RANDOM = f"{sys.executable} {EXAMPLES / 'random_bot.py'}"
KNAVES = f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}"


def cli(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def played(db: str) -> tuple[int, int]:
    """(finished matches, rated bots) over every game."""
    with Store(db) as store:
        finished = sum(
            1
            for t in store.list_tournaments()
            for m in store.matches(t.id or 0)
            if m.status == MatchStatus.FINISHED.value
        )
        games = {t.game for t in store.list_tournaments()}
        return finished, sum(len(store.ratings(g)) for g in games)


def setup(tmp_path: Path) -> tuple[str, str]:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    for name, command in (("rules", KNAVES), ("rand1", RANDOM)):
        assert cli(db, "bot", "add", name, "--command", command).returncode == 0
    added = cli(db, "bot", "add", "remote1", "--json")
    return db, json.loads(added.stdout)["token"]


def test_a_remote_bot_that_never_connects_stops_the_run_with_nothing_rated(
    tmp_path: Path,
) -> None:
    db, _ = setup(tmp_path)
    port = free_port()
    args = ("tournament", "run", "knaves", "--bots", "rules,rand1,remote1", "--port", str(port))
    run = cli(db, *args, "--wait-s", "2", "--sandbox", "none")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"waiting up to 2 s for remote bot(s) remote1 to connect to 127.0.0.1:{port}" in (
        run.stdout
    )
    assert "tournament 1 did not start: nothing was played or rated" in run.stderr
    assert "bot 'remote1' did not connect in 2 s" in run.stderr
    assert "Traceback" not in run.stderr
    assert played(db) == (0, 0)


def test_a_remote_bot_that_connects_late_plays_every_match_unforfeited(tmp_path: Path) -> None:
    db, token = setup(tmp_path)
    port = free_port()
    command = [
        sys.executable, "-m", "server.cli", "tournament", "run", "knaves",
        "--bots", "rules,rand1,remote1", "--port", str(port), "--wait-s", "120",
        "--sandbox", "none", "--db", db,
    ]  # fmt: skip
    run = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    bot = None
    try:
        assert run.stdout is not None
        for line in run.stdout:  # the bot starts only once the run says it waits for it
            if line.startswith("waiting up to 120 s for remote bot(s) remote1"):
                bot = subprocess.Popen(
                    [sys.executable, str(EXAMPLES / "random_bot.py"),
                     "--server", f"127.0.0.1:{port}", "--token", token],
                    cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                break
        out, err = run.communicate(timeout=300)
    finally:
        if bot is not None:
            bot.kill()
            bot.wait()
        if run.poll() is None:
            run.kill()
            run.wait()
    assert bot is not None, "the run never said it was waiting"
    assert run.returncode == 0, out + err
    with Store(db) as store:
        rows = {r.bot: r for r in store.rankings("knaves")}
    assert rows["remote1"].matches == 6 and rows["remote1"].faults == 0


def test_a_bot_whose_hello_names_other_games_is_refused_before_the_first_match(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    assert cli(db, "bot", "add", "knaves-only", "--command", KNAVES).returncode == 0
    for n in range(4):
        assert cli(db, "bot", "add", f"rand{n}", "--command", RANDOM).returncode == 0
    field = "knaves-only,rand0,rand1,rand2,rand3"
    run = cli(db, "tournament", "run", "knives", "--bots", field, "--sandbox", "none")
    assert run.returncode == 2, run.stdout + run.stderr
    refused = [line for line in run.stderr.splitlines() if "knaves-only" in line]
    assert refused == [
        "bot 'knaves-only' said in its Hello that it plays knaves, not knives: it was not seated"
    ]
    assert "--allow-absent" not in run.stderr  # playing on would not seat it either
    assert played(db) == (0, 0)
    # --allow-absent does not seat it either.
    again = cli(db, "tournament", "resume", "1", "--sandbox", "none", "--allow-absent")
    assert again.returncode == 2 and "not knives" in again.stderr
    assert played(db) == (0, 0)
