"""`cardshark compare` end to end with real bot processes: a clearly weaker bot is found
worse, a bot against itself is not found better, and an interrupted run resumed reaches the
same sets and verdict as an uninterrupted one."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from server.bots.house import HouseBot
from server.play.compare_sets import progress_line, set_difference, set_seats
from tournaments.sequential import SprtSettings, sprt_steps
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
RULES, NOISY = "house:knaves:noise=0", "house:knaves:noise=0.5"
# Knaves' rule bot gains most of its lead by exploiting a careless table: with random bots
# in the third seat, its noise-0.5 copy trails by about 3 points a match (docs/statistics.md).
RANDOM_FIELD = ("--field", "house:knaves:noise=1")


def compare(*args: str, tmp: Path, log: str = "logs") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args, tmp=tmp, log=log), cwd=tmp, capture_output=True, text=True, timeout=600
    )


def command(*args: str, tmp: Path, log: str = "logs") -> list[str]:
    db = f"sqlite:///{tmp / 'cs.db'}"
    return [sys.executable, "-m", "server.cli", "compare", *args, "--db", db, "--log-dir", log]


def verdict(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert run.returncode == 0, run.stdout + run.stderr
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def test_a_set_seats_new_and_base_in_every_seat_against_the_same_neighbours() -> None:
    seatings = set_seats(3)
    assert len(seatings) == 6 and len({tuple(s) for s in seatings}) == 6
    for seat in range(3):  # each in each seat twice, and each seating has its swap
        assert sum(s[seat] == 0 for s in seatings) == 2 == sum(s[seat] == 1 for s in seatings)
    swapped = [[{0: 1, 1: 0}.get(i, i) for i in s] for s in seatings]
    assert sorted(swapped) == sorted(seatings)
    assert set_seats(2) == [[0, 1], [1, 0]]
    assert len(set_seats(5)) == 10
    # NEW (0) scores 3 more in the first match, BASE (1) 1 more in the second: +1 a match
    assert set_difference([[0, 1], [1, 0]], [[5, 2], [4, 3]]) == 1.0


def test_the_rule_bot_is_better_than_its_noisy_copy(tmp_path: Path) -> None:
    run = compare(
        RULES, NOISY, "--game", "knaves", *RANDOM_FIELD, "--seed", "1", "--max-sets", "120",
        tmp=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("compare ") and "seed 1" in lines[0]
    progress = [line for line in lines if line.startswith("set ")]
    assert progress[0].startswith("set 1 (6 matches): NEW-BASE ")
    assert progress[0].endswith("; no verdict before 5 sets (then one at -2.94 or 2.94)")
    assert lines[-1].startswith("better: house:knaves:noise=0 beats house:knaves:noise=0.5 by +")
    assert len(progress) < 120
    saved = json.loads(next((tmp_path / "logs" / "compare").glob("*.json")).read_text())
    assert len(saved["sets"]) == len(progress)
    new_total = sum(
        score
        for s in saved["sets"]
        for m in s["matches"]
        for role, score in zip(m["seats"], m["scores"], strict=True)
        if role == "new"
    )
    base_total = sum(
        score
        for s in saved["sets"]
        for m in s["matches"]
        for role, score in zip(m["seats"], m["scores"], strict=True)
        if role == "base"
    )
    assert new_total > base_total


def test_the_first_sets_say_no_verdict_before_5_sets_wherever_the_llr_is(tmp_path: Path) -> None:
    # Before five sets no LLR decides anything; "LLR 10.36 in (-2.94, 2.94)" was false.
    run = compare(
        RULES, NOISY, "--game", "knaves", *RANDOM_FIELD, "--seed", "1", "--max-sets", "2",
        "--sandbox", "none", tmp=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    progress = [line for line in run.stdout.splitlines() if line.startswith("set ")]
    assert [line.split(" (")[0] for line in progress] == ["set 1", "set 2"]
    for line in progress:
        assert re.search(
            r"; LLR -?\d+\.\d\d; no verdict before 5 sets \(then one at -2\.94 or 2\.94\)$", line
        ), line
    steps = list(sprt_steps([3.0, 2.5, 4.0, 3.5, 0.1, 0.2], SprtSettings(0.0, 0.5)))
    fifth = progress_line(steps[4], 30)
    assert "no verdict" not in fifth and fifth.endswith(f"in ({steps[4].lower:.2f}, 2.94)")


def test_a_bot_against_itself_is_not_better(tmp_path: Path) -> None:
    noisy = HouseBot("knaves", 0.5).command
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        store.add_bot("twin-a", noisy)
        store.add_bot("twin-b", noisy)
    result = verdict(
        compare(
            "twin-a",
            "twin-b",
            "--game",
            "knaves",
            *RANDOM_FIELD,
            "--seed",
            "3",
            "--max-sets",
            "40",
            "--json",
            tmp=tmp_path,
        )  # fmt: skip
    )
    assert result["verdict"] in ("not better", "undecided")
    assert result["new"] == "twin-a" and result["base"] == "twin-b"
    assert result["sets"] == len(result["differences"]) <= 40
    assert result["low"] < result["mean"] < result["high"]
    assert result["llr"] < result["upper"]


def test_an_interrupted_compare_resumes_to_the_uninterrupted_verdict(tmp_path: Path) -> None:
    args = (RULES, NOISY, "--game", "knaves", *RANDOM_FIELD, "--seed", "5", "--max-sets", "60")
    whole = verdict(compare(*args, "--json", tmp=tmp_path, log="whole"))

    proc = subprocess.Popen(
        command(*args, tmp=tmp_path, log="parts"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("set 1 "):
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "better" not in out  # stopped before any verdict
    assert f"cardshark compare --resume {whole['id']}" in err
    saved = json.loads((tmp_path / "parts" / "compare" / f"{whole['id']}.json").read_text())
    assert 1 <= len(saved["sets"]) < whole["sets"]

    resumed = verdict(compare("--resume", whole["id"], "--json", tmp=tmp_path, log="parts"))
    assert resumed["verdict"] == whole["verdict"] == "better"
    assert resumed["differences"] == whole["differences"]
    assert (resumed["mean"], resumed["low"], resumed["high"], resumed["llr"]) == (
        whole["mean"], whole["low"], whole["high"], whole["llr"],
    )  # fmt: skip
    # The same command again finds the finished run and plays nothing more.
    again = compare(*args, tmp=tmp_path, log="parts")
    assert again.returncode == 0 and f"continuing from {whole['sets']} saved sets" in again.stdout
    assert not [line for line in again.stdout.splitlines() if line.startswith("set ")]


def test_bad_compare_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    for args, why in [
        ((RULES, "house:knaves:noise=3", "--game", "knaves"), "outside 0 to 1"),
        ((RULES, NOISY, "--game", "knaves", "--h1", "0"), "h1 must be above h0"),
        ((RULES, NOISY, "--game", "knaves", "--field", "a,b,c"), "--field needs 1 or 1"),
        (("--resume", "0123456789ab"), "no saved compare run"),
        ((RULES,), "give NEW, BASE and --game"),
    ]:
        run = compare(*args, tmp=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and why in lines[0], (args, run.stderr)
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        assert store.list_bots() == []


def test_the_rule_bot_is_better_than_its_noise_025_copy_in_most_seeded_runs(
    tmp_path: Path,
) -> None:
    # Issue 21's close pair: the rule bot leads its noise-0.25 copy by about 1.6 points a
    # match with random bots in the third seat (bench/compare_errors.py), a set's spread
    # about 3.3. Five seeds at once, each its own database and logs.
    seeds = range(31, 36)
    runs = []
    for seed in seeds:
        tmp = tmp_path / f"seed{seed}"
        tmp.mkdir()
        args = (RULES, "house:knaves:noise=0.25", "--game", "knaves", *RANDOM_FIELD)
        runs.append(
            subprocess.Popen(
                command(*args, "--seed", str(seed), "--max-sets", "200", "--json", tmp=tmp),
                cwd=tmp,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = []
    for proc in runs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    better = [r for r in results if r["verdict"] == "better"]
    assert len(better) >= 4, [(r["verdict"], r["sets"], r["mean"]) for r in results]
    assert all(r["sets"] < 200 and r["low"] > 0 for r in better)
