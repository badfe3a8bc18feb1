"""`tournament run --until-confident P`: rounds are added until every neighbour pair of the
standings is separated, with real bot processes: a field with one pair of identical bots
stops at the cap with that pair alone unresolved, and runs cut by kill -9 and Ctrl-C resume
to the uninterrupted verdict. The loop itself, on scripted results, stops as soon as the
order is known."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from server.bots.house import HouseBot
from server.cli.until_confident import play_until_confident
from tournaments.confidence import ConfidenceGoal
from tournaments.ratings import SeatOutcome
from tournaments.standings import summarise
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
TOP, RANDOM, TWIN = "house-knaves-noise0", "house-knaves-noise1", "rand-twin"
# The rule bot and two copies of the random bot: registered under two names, one command.
FIELD = ("house:knaves:noise=0", "house:knaves:noise=1", TWIN)
MAX_ROUNDS = 12
GOAL = ConfidenceGoal(0.95, MAX_ROUNDS)
# Identical bots come out "separated" with probability at most 1 - 0.95 (the goal's bound):
# on seed 5 they did, by round 9, once the bots' randomness came from the request's
# random_seed (seeds 6 to 11 all ended unresolved at the cap, P 0.51-0.88). Seed 6 is a run
# where the bound's rare event does not happen, as the test needs.
RUN = (
    "tournament", "run", "knaves", "--bots", ",".join(FIELD), "--seed", "6",
    "--until-confident", "0.95", "--max-rounds", str(MAX_ROUNDS), "--concurrency", "3",
)  # fmt: skip


def command(*args: str, db: str) -> list[str]:
    return [sys.executable, "-m", "server.cli", *args, "--db", db]


def cli(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        command(*args, db=db), cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def new_db(path: Path) -> str:
    db = f"sqlite:///{path}"
    cli("bot", "add", TWIN, "--command", HouseBot("knaves", 1.0).command, db=db)
    return db


def round_lines(out: str) -> dict[int, str]:
    """Each `round K of at most N: ...` line by K (a resumed run may repeat one)."""
    lines = {}
    for line in out.splitlines():
        if line.startswith("round "):
            lines[int(line.split()[1])] = line
    return lines


def verdict_line(out: str) -> str:
    (line,) = [x for x in out.splitlines() if x.startswith("until-confident ")]
    return line


@dataclass
class Whole:
    db: str
    out: str
    show: dict[str, Any]


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Whole:
    db = new_db(tmp_path_factory.mktemp("whole") / "cs.db")
    out = cli(*RUN, db=db).stdout
    show = json.loads(cli("tournament", "show", "1", "--json", db=db).stdout)
    return Whole(db, out, show)


def test_identical_bots_stay_unresolved_while_the_other_pair_resolves(whole: Whole) -> None:
    lines = round_lines(whole.out)
    assert sorted(lines) == list(range(1, MAX_ROUNDS + 1))  # one line per round, to the cap
    twins = {RANDOM, TWIN}
    for k, line in lines.items():
        assert line.startswith(f"round {k} of at most {MAX_ROUNDS}: ")
        assert f"< {GOAL.threshold:.5f}" in line
    # The rule bot over a random bot resolves within the cap and stays resolved; the
    # identical pair is in every round's line.
    first = min(k for k, line in lines.items() if TOP not in line)
    assert first < MAX_ROUNDS
    assert all(TOP not in lines[k] for k in range(first, MAX_ROUNDS + 1))
    assert all(
        f"{RANDOM} over {TWIN}" in line or f"{TWIN} over {RANDOM}" in line
        for line in lines.values()
    )
    verdict = verdict_line(whole.out)
    assert verdict.startswith(
        f"until-confident 0.95: stopped at --max-rounds {MAX_ROUNDS} with 1 pair(s) unresolved: "
    )
    assert TOP not in verdict and RANDOM in verdict and TWIN in verdict

    # tournament show agrees: 12 rounds of the one table's 6 seatings, the neighbours'
    # P(above next) on each side of the threshold, in JSON and CSV alike.
    data = whole.show
    assert data["tournament"]["rounds"] == MAX_ROUNDS
    assert data["tournament"]["finished"] == data["tournament"]["scheduled"] == 6 * MAX_ROUNDS
    assert data["tournament"]["status"] == "finished"
    upper, lower = data["neighbours"]
    assert upper["a"] == TOP and upper["b"] == lower["a"] and {lower["a"], lower["b"]} == twins
    assert upper["n"] == lower["n"] == MAX_ROUNDS
    assert upper["p_above"] >= GOAL.threshold > lower["p_above"]
    assert upper["ci_low"] > 0 and lower["ci_low"] < 0 < lower["ci_high"]
    assert f"P {lower['p_above']:.4f} n={MAX_ROUNDS}" in verdict
    rows = list(
        csv.DictReader(io.StringIO(cli("tournament", "show", "1", "--csv", db=whole.db).stdout))
    )
    assert [(r["bot"], r["p_above_next"]) for r in rows] == [
        (TOP, repr(upper["p_above"])),
        (lower["a"], repr(lower["p_above"])),
        (lower["b"], "n/a"),
    ]
    table = cli("tournament", "show", "1", "--table", "standings", db=whole.db).stdout
    assert "P(above next)" in table and f"{upper['p_above']:.3f}" in table


def interrupt(
    db: str, args: tuple[str, ...], sig: signal.Signals, when: Callable[[str], bool], stream: str
) -> str:
    """Run the command until `when` holds for a line of `stream`, then send `sig`; returns
    its stdout."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with (Path(db.removeprefix("sqlite:///")).parent / f"{sig.name}.log").open("w+") as other:
        proc = subprocess.Popen(
            command(*args, db=db),
            cwd=ROOT,
            stdout=subprocess.PIPE if stream == "stdout" else other,
            stderr=subprocess.PIPE if stream == "stderr" else other,
            text=True,
            env=env,
            start_new_session=True,
        )
        watched = proc.stdout if stream == "stdout" else proc.stderr
        assert watched is not None
        seen = []
        try:
            for line in watched:
                seen.append(line)
                if when(line):
                    proc.send_signal(sig)
                    break
            rest = watched.read()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # bot processes a kill -9 left behind, if any
        assert any(when(line) for line in seen), "".join(seen)
        assert proc.returncode == (-9 if sig == signal.SIGKILL else 130)
        other.seek(0)
        return "".join(seen) + rest if stream == "stdout" else other.read()


def at_least(done: int) -> Callable[[str], bool]:
    """A progress line (`tournament 1: D/M matches, ...`) with D at least `done`."""

    def reached(line: str) -> bool:
        words = line.split()
        return line.startswith("tournament 1: ") and int(words[2].split("/")[0]) >= done

    return reached


def test_interrupted_runs_resume_to_the_uninterrupted_verdict(whole: Whole, tmp_path: Path) -> None:
    db = new_db(tmp_path / "cs.db")
    # kill -9 once 20 matches are committed (round 4 has 6) ...
    killed = interrupt(db, RUN, signal.SIGKILL, at_least(20), "stderr")
    assert "round 3 of" in killed
    with Store(db) as store:
        status = store.tournament_status(1)
        assert status.tournament.rounds in (4, 5) and 20 <= status.finished < 6 * MAX_ROUNDS
    # ... then Ctrl-C as soon as round 7 is decided, before round 8 is played out ...
    stopped = interrupt(
        db,
        ("tournament", "resume", "1"),
        signal.SIGINT,
        lambda line: line.startswith("round 7 "),
        "stdout",
    )
    with Store(db) as store:
        assert store.tournament_status(1).finished < 6 * MAX_ROUNDS
    # ... and a last resume to the end.
    last = cli("tournament", "resume", "1", db=db).stdout

    lines = round_lines(killed) | round_lines(stopped) | round_lines(last)
    assert lines == round_lines(whole.out)
    assert verdict_line(last) == verdict_line(whole.out)
    resumed = json.loads(cli("tournament", "show", "1", "--json", db=db).stdout)
    assert resumed["neighbours"] == whole.show["neighbours"]
    assert resumed["cross_table"] == whole.show["cross_table"]
    assert resumed["tournament"] == whole.show["tournament"]
    # The TrueSkill numbers rated live across the kill -9 and the resumes are those a
    # recompute from the stored matches gives, to the last bit.
    live = cli("rankings", "knaves", "--json", db=db).stdout
    assert (
        json.loads(live)
        and "recomputed knaves ratings" in cli("ratings", "recompute", "knaves", db=db).stdout
    )
    assert cli("rankings", "knaves", "--json", db=db).stdout == live
    # Resuming a tournament that reached its verdict plays nothing and says it again.
    again = cli("tournament", "resume", "1", db=db).stdout
    assert verdict_line(again) == verdict_line(whole.out)
    assert list(round_lines(again)) == [MAX_ROUNDS]


def test_bad_goals_are_refused_before_anything_is_stored(tmp_path: Path) -> None:
    db = new_db(tmp_path / "cs.db")
    for extra, why in [
        (("--until-confident", "1.2"), "confidence must be above 0.5 and below 1"),
        (("--until-confident", "0.5"), "confidence must be above 0.5 and below 1"),
        (("--max-rounds", "4"), "--max-rounds caps --until-confident"),
        (("--until-confident", "0.9", "--max-rounds", "2", "--rounds", "3"), "below --rounds 3"),
    ]:
        run = subprocess.run(
            command("tournament", "run", "knaves", "--bots", ",".join(FIELD), *extra, db=db),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2, (extra, run.stdout, run.stderr)
        assert why in run.stderr, (extra, run.stderr)
    with Store(db) as store:
        assert store.list_tournaments() == []


# -- the loop on scripted results ---------------------------------------------------------


def scripted(store: Store, tournament_id: int, strength: dict[str, float], noise: float) -> None:
    """Record every pending match: each bot scores its strength plus luck drawn for its seat
    in this match (seeded by the deal's seed and the rotation), so sets are not ties."""
    import random

    names = {b.id: b.name for b in store.tournament_entrants(tournament_id)}
    for match in store.pending_matches(tournament_id):
        assert match.id is not None
        rng = random.Random(f"{match.seed}:{match.rotation}")
        luck = [rng.gauss(0.0, noise) for _ in match.seats]
        store.record_result(
            match.id,
            [SeatOutcome(strength[names[b]] + luck[seat]) for seat, b in enumerate(match.seats)],
        )


def test_the_loop_stops_as_soon_as_every_pair_is_separated(tmp_path: Path) -> None:
    said: list[str] = []
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        for name in ("a", "b", "c", "d"):
            store.add_bot(name)
        t = store.create_tournament("knaves", ["c", "a", "d", "b"], seed=3)
        assert t.id is not None
        tid = t.id
        store.set_goal(tid, ConfidenceGoal(0.9, max_rounds=30))
        strength = {"a": 12.0, "b": 8.0, "c": 4.0, "d": 0.0}
        plays: list[int] = []

        lowest: list[float] = []  # after each round, the smallest P(above next)

        def play() -> None:
            plays.append(store.tournament_status(tid).scheduled)
            scripted(store, tid, strength, noise=3.0)
            result = summarise(store.tournament_rows(tid))
            lowest.append(min(n.p_above or 0.0 for n in result.neighbours))

        left = play_until_confident(store, tid, play, said.append)
        rounds = store.get_tournament(tid).rounds
    assert left == []
    needed = 1 - 0.1 / (2 * 30)
    assert lowest[-1] >= needed and all(p < needed for p in lowest[:-1])
    assert 2 <= rounds < 30  # stopped early, and not before P could be computed
    assert plays == [24 * k for k in range(1, rounds + 1)]  # one round added per check
    assert len(said) == rounds + 2  # the threshold, a line a round, the verdict
    assert (
        said[-2]
        == f"round {rounds} of at most 30: every neighbour pair separated (P(above next) ≥ 0.99833)"
    )
    assert all("unresolved" in line for line in said[1:-2])
    known = f"until-confident 0.9: order known after {rounds} round(s)"
    assert said[-1] == f"{known}: every neighbour pair separated"


def test_the_first_line_names_the_per_look_threshold_and_why(tmp_path: Path) -> None:
    # "P 0.9800 unresolved against 0.99583" read as a mistake without it: the threshold is
    # per look, Bonferroni over both orders of a pair and every round's look.
    said: list[str] = []
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        for name in ("a", "b", "c"):
            store.add_bot(name)
        t = store.create_tournament("knaves", ["a", "b", "c"], seed=3)
        assert t.id is not None
        store.set_goal(t.id, ConfidenceGoal(0.95))
        tid = t.id
        play_until_confident(
            store, tid, lambda: scripted(store, tid, {"a": 30.0, "b": 15.0, "c": 0.0}, 1.0),
            said.append,
        )  # fmt: skip
    assert said[0] == (
        "a pair is separated at P(above next) ≥ 0.99875 (per look): 1 - (1-0.95)/(2*20), "
        "Bonferroni over both orders and up to 20 looks (one a round)"
    )
    assert said[1].startswith("round 1 of at most 20: ")
