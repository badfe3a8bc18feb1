"""Inspecting results through the cardshark command: `tournament show` (JSON, CSV, tables),
`tournament list`, `match list` filters and `bot show`, each checked against the rows the
store holds after a real round robin of example bot processes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from tournaments.models import Match, MatchStatus, SeatResult
from tournaments.store import LOAD_VOID_PREFIX, Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
ONE_ILLEGAL = ROOT / "tests" / "server" / "bots" / "one_illegal.py"
ENTRANTS = ["rules", "rand1", "rand2", "flaky"]


def cli(*args: str, db: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == code, run.stdout + run.stderr
    return run


def cli_json(*args: str, db: str) -> Any:
    return json.loads(cli(*args, "--json", db=db).stdout)


@dataclass(frozen=True)
class Played:
    """The database after the runs, and what the store says about it."""

    db: str
    knaves: int  # the played round robin
    kill: int  # a created, never played tournament
    ids: dict[str, int]  # bot name -> id
    matches: list[Match]  # every match row of both tournaments
    seats: dict[int, list[SeatResult]]  # finished match id -> its seat rows


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    tmp = tmp_path_factory.mktemp("inspect")
    db = f"sqlite:///{tmp / 'cs.db'}"
    commands = {
        "rules": f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}",
        "rand1": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
        "rand2": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
        "rand3": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
        # plays one illegal card at its 3rd choice: one illegal_action fault in the run
        "flaky": f"{sys.executable} {ONE_ILLEGAL} {tmp / 'illegal.hex'} 3",
    }
    for name, command in commands.items():
        cli("bot", "add", name, "--command", command, db=db)
    cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        ",".join(ENTRANTS),
        "--rounds",
        "2",
        "--seed",
        "11",
        "--sandbox",
        "none",
        db=db,
    )
    cli(
        "tournament",
        "run",
        "kill",
        "--bots",
        "rand1,rand2,rand3",
        "--seats",
        "3",
        "--create-only",
        db=db,
    )
    cli("bot", "remove", "rand2", db=db)  # it played: retired, not deleted
    with Store(db) as store:
        knaves, kill = (
            t.id or 0 for t in sorted(store.list_tournaments(), key=lambda t: t.id or 0)
        )
        ids = {b.name: b.id or 0 for b in store.list_bots(include_removed=True)}
        matches = store.matches(knaves) + store.matches(kill)
        seats = {
            m.id or 0: store.seat_results(m.id or 0)
            for m in matches
            if m.status == MatchStatus.FINISHED.value
        }
    return Played(db, knaves, kill, ids, matches, seats)


def fault_kinds(match: Match, bot_id: int | None = None) -> Counter[str]:
    """Kinds of the faults a match's record charges (to one bot's seat if given)."""
    return Counter(
        f["kind"]
        for f in (match.record or {}).get("faults", [])
        if bot_id is None or match.seats[f["seat"]] == bot_id
    )


def newest_first(matches: list[Match]) -> list[int]:
    return sorted((m.id or 0 for m in matches), reverse=True)


# -- tournament show ----------------------------------------------------------------------


def test_show_json_matches_the_stored_seat_results_and_deals(played: Played) -> None:
    data = cli_json("tournament", "show", str(played.knaves), db=played.db)
    finished = [m for m in played.matches if m.tournament_id == played.knaves and m.seats]
    finished = [m for m in finished if m.status == MatchStatus.FINISHED.value]
    assert data["tournament"]["finished"] == data["tournament"]["scheduled"] == len(finished) == 48

    expected: dict[str, dict[str, Any]] = {}
    for name in ENTRANTS:
        rows = [
            s for m in finished for s in played.seats[m.id or 0] if s.bot_id == played.ids[name]
        ]
        expected[name] = {
            "matches": len(rows),
            "total_score": sum(s.score for s in rows),
            "places": [sum(1 for s in rows if s.rank == k) for k in (1, 2, 3)],
            "faults": sum(s.faults for s in rows),
            "forfeits": sum(s.forfeited for s in rows),
        }
    shown = {s["bot"]: {k: s[k] for k in expected["rules"]} for s in data["standings"]}
    assert shown == expected
    assert expected["flaky"]["faults"] == 1 and expected["rules"]["matches"] == 36
    means = [s["mean_score"] for s in data["standings"]]
    assert means == sorted(means, reverse=True)

    with Store(played.db) as store:
        ratings = store.ratings("knaves")
    for s in data["standings"]:
        rating = ratings[s["bot_id"]]
        assert s["rating_after"] == {"mu": rating.mu, "sigma": rating.sigma}
        assert s["rating_before"] == {"mu": 25.0, "sigma": 25.0 / 3}
    assert next(s for s in data["standings"] if s["bot"] == "rand2")["retired"] is True

    # A's score minus B's per match, averaged per deal (round, table), then over deals.
    score = {m.id: {s.bot_id: s.score for s in played.seats[m.id or 0]} for m in finished}
    for pair in data["cross_table"]:
        a, b = played.ids[pair["a"]], played.ids[pair["b"]]
        deals: dict[tuple[int, int], list[float]] = defaultdict(list)
        for m in finished:
            if a in m.seats and b in m.seats:
                deals[(m.round, m.table_index)].append(score[m.id][a] - score[m.id][b])
        assert pair["matches"] == sum(map(len, deals.values())) == 24  # 2 tables x 6 x 2 rounds
        assert pair["n"] == len(deals) == 4
        assert pair["mean_difference"] == pytest.approx(
            fmean(fmean(d) for d in deals.values()), rel=1e-12, abs=1e-12
        )
        assert pair["ci_low"] <= pair["mean_difference"] <= pair["ci_high"]
    assert [(p["a"], p["b"]) for p in data["cross_table"]] == [
        (ENTRANTS[i], ENTRANTS[j]) for i in range(4) for j in range(i + 1, 4)
    ]

    voided = [m for m in played.matches if m.status == MatchStatus.VOIDED.value]
    load = sum(1 for m in voided if (m.result or {})["void_reason"].startswith(LOAD_VOID_PREFIX))
    assert data["voids"] == {"load": load, "other": len(voided) - load}


def test_show_csv_agrees_with_json(played: Played) -> None:
    data = cli_json("tournament", "show", str(played.knaves), db=played.db)
    knaves = str(played.knaves)
    standings = list(
        csv.DictReader(io.StringIO(cli("tournament", "show", knaves, "--csv", db=played.db).stdout))
    )
    assert [r["bot"] for r in standings] == [s["bot"] for s in data["standings"]]
    for row, s in zip(standings, data["standings"], strict=True):
        assert int(row["matches"]) == s["matches"]
        assert float(row["total_score"]) == s["total_score"]
        assert float(row["mean_score"]) == s["mean_score"]
        assert [int(row[f"place_{k}"]) for k in (1, 2, 3)] == s["places"]
        assert (int(row["faults"]), int(row["forfeits"])) == (s["faults"], s["forfeits"])
        assert float(row["mu_after"]) == s["rating_after"]["mu"]
        assert float(row["sigma_before"]) == s["rating_before"]["sigma"]
        assert row["retired"] == str(s["retired"]).lower()
    cross = cli("tournament", "show", knaves, "--csv", "--table", "cross", db=played.db).stdout
    rows = list(csv.DictReader(io.StringIO(cross)))
    assert [
        (r["a"], r["b"], int(r["matches"]), int(r["n"]), float(r["mean_difference"]))
        + (float(r["ci_low"]), float(r["ci_high"]))
        for r in rows
    ] == [
        (p["a"], p["b"], p["matches"], p["n"], p["mean_difference"], p["ci_low"], p["ci_high"])
        for p in data["cross_table"]
    ]


def test_show_tables_and_the_load_void_line(played: Played) -> None:
    data = cli_json("tournament", "show", str(played.knaves), db=played.db)
    out = cli("tournament", "show", str(played.knaves), db=played.db).stdout
    lines = out.splitlines()
    assert (
        lines[0]
        == f"tournament {played.knaves}: knaves round robin, 3 seats, finished, 48/48 matches"
    )
    load = data["voids"]["load"]
    if load:
        assert f"{load} match(es) voided for the server's load and replayed (never rated)" in lines
    else:
        assert "voided" not in out
    best = data["standings"][0]
    row = next(line for line in lines if f" {best['bot']} " in line and "│ 1 │" in line)
    assert f" {best['total_score']:g} " in row and f" {best['mean_score']:.2f} " in row
    assert "rand2 (retired)" in out
    assert "Cross-table" in out
    pending = cli("tournament", "show", str(played.kill), "--table", "cross", db=played.db).stdout
    assert pending.splitlines()[0].endswith("pending, 0/6 matches")
    assert pending.count("never met") == 6 and "Standings" not in pending


# -- tournament list ----------------------------------------------------------------------


def test_list_shows_progress_and_how_to_resume_unfinished_ones(played: Played) -> None:
    rows = {t["id"]: t for t in cli_json("tournament", "list", db=played.db)}
    assert rows[played.knaves] == {
        "id": played.knaves,
        "game": "knaves",
        "status": "finished",
        "finished": 48,
        "scheduled": 48,
        "worker": None,  # any worker (or this machine) plays it
        "resume": None,
    }
    assert rows[played.kill]["status"] == "pending"
    assert (rows[played.kill]["finished"], rows[played.kill]["scheduled"]) == (0, 6)
    assert rows[played.kill]["resume"] == f"cardshark tournament resume {played.kill}"
    table = cli("tournament", "list", db=played.db).stdout
    line = next(x for x in table.splitlines() if f"│ {played.kill} " in x)
    assert "pending" in line and "0/6" in line and "│ any " in line
    assert f"cardshark tournament resume {played.kill}" in line
    line = next(x for x in table.splitlines() if f"│ {played.knaves} " in x)
    assert "48/48" in line and "resume" not in line


# -- match list ---------------------------------------------------------------------------


def listed(played: Played, *args: str) -> list[int]:
    if "--tournament" not in args:
        args = (*args, "--tournament", "all")
    return [m["id"] for m in cli_json("match", "list", *args, db=played.db)]


def test_match_list_filters_return_exactly_the_expected_matches(played: Played) -> None:
    everything = played.matches
    flaky, rules = played.ids["flaky"], played.ids["rules"]
    knaves = [m for m in everything if m.tournament_id == played.knaves]
    faulted = [m for m in everything if fault_kinds(m)]
    assert len(faulted) >= 1 and fault_kinds(faulted[0], flaky)["illegal_action"] == 1

    # without --tournament: the latest tournament's matches (of --game's if given)
    assert [m["id"] for m in cli_json("match", "list", db=played.db)] == newest_first(
        [m for m in everything if m.tournament_id == played.kill]
    )
    assert [
        m["id"]
        for m in cli_json("match", "list", "--game", "knaves", "--limit", "99", db=played.db)
    ] == newest_first(knaves)
    assert listed(played) == newest_first(everything)[:50]
    assert listed(played, "--limit", "1000") == newest_first(everything)
    assert listed(played, "--limit", "3") == newest_first(everything)[:3]
    assert listed(played, "--tournament", str(played.knaves), "--limit", "1000") == newest_first(
        knaves
    )
    assert listed(played, "--game", "kill") == newest_first(
        [m for m in everything if m.tournament_id == played.kill]
    )
    assert listed(played, "--status", "pending") == newest_first(
        [m for m in everything if m.status == "pending"]
    )
    assert listed(played, "--bot", "flaky", "--limit", "1000") == newest_first(
        [m for m in everything if flaky in m.seats]
    )
    assert listed(played, "--bot", "rand2", "--game", "kill") == newest_first(
        [m for m in everything if m.tournament_id == played.kill and played.ids["rand2"] in m.seats]
    )
    assert listed(played, "--faults", "--limit", "1000") == newest_first(faulted)
    assert listed(played, "--fault-kind", "illegal_action") == newest_first(
        [m for m in everything if fault_kinds(m)["illegal_action"]]
    )
    assert listed(played, "--fault-kind", "no_show") == newest_first(
        [m for m in everything if fault_kinds(m)["no_show"]]
    )
    assert listed(played, "--bot", "flaky", "--faults") == newest_first(
        [m for m in everything if fault_kinds(m, flaky)]
    )
    assert listed(played, "--bot", "rules", "--faults") == newest_first(
        [m for m in everything if fault_kinds(m, rules)]
    )
    found = cli_json(
        "match", "list", "--fault-kind", "illegal_action", "--tournament", "all", db=played.db
    )[0]
    seat = found["seats"].index("flaky")
    assert found["fault_kinds"][seat] == {"illegal_action": 1} and found["faults"][seat] == 1


def test_match_list_table_names_the_faulty_seat(played: Played) -> None:
    out = cli(
        "match", "list", "--fault-kind", "illegal_action", "--tournament", "all", db=played.db
    ).stdout
    row = next(line for line in out.splitlines() if "flaky: illegal_action×1" in line)
    assert "finished" in row and "knaves" in row


# -- bot show -----------------------------------------------------------------------------


def test_bot_show_counts_ratings_and_faults(played: Played) -> None:
    data = cli_json("bot", "show", "flaky", "--recent", "4", db=played.db)
    flaky = played.ids["flaky"]
    with Store(played.db) as store:
        rating = store.ratings("knaves")[flaky]
    assert data["name"] == "flaky" and data["retired"] is None and data["kind"] == "managed"
    assert data["tournaments"] == 1
    assert data["ratings"] == [
        {
            "game": "knaves",
            "mu": rating.mu,
            "sigma": rating.sigma,
            "conservative": rating.mu - 3 * rating.sigma,
            "matches": 36,
            "mean_score": rating.score_sum / 36,
            "faults": 1,
        }
    ]
    charged = sum(
        (fault_kinds(m, flaky) for m in played.matches if m.status == "finished"), Counter()
    )
    assert data["faults"] == dict(charged) == {"illegal_action": 1}
    played_by_flaky = [m for m in played.matches if flaky in m.seats and m.status != "pending"]
    assert [m["id"] for m in data["recent"]] == newest_first(played_by_flaky)[:4]

    out = cli("bot", "show", "flaky", db=played.db).stdout
    assert out.splitlines()[0].startswith(f"bot flaky (id {flaky}), managed, by house, registered ")
    assert "faults by kind: illegal_action 1" in out.splitlines()
    assert f"│ knaves │ {rating.mu:.2f} │ {rating.sigma:.2f} │" in out


def test_a_retired_bot_still_answers(played: Played) -> None:
    rand2 = played.ids["rand2"]
    data = cli_json("bot", "show", "rand2", db=played.db)
    assert data["retired"] is not None and data["tournaments"] == 2
    assert [r["matches"] for r in data["ratings"]] == [36]
    played_by_rand2 = [m for m in played.matches if rand2 in m.seats and m.status != "pending"]
    assert [m["id"] for m in data["recent"]] == newest_first(played_by_rand2)[:10]
    first = cli("bot", "show", "rand2", db=played.db).stdout.splitlines()[0]
    assert first.startswith(f"bot rand2 (id {rand2}), managed") and ", retired " in first
    assert "rand2" not in cli("bot", "list", db=played.db).stdout


# -- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["match", "list", "--status", "done"],
            "error: unknown --status 'done'; allowed: pending, running, finished, voided",
        ),
        (
            ["match", "list", "--fault-kind", "slow"],
            "error: unknown --fault-kind 'slow'; allowed: timeout, unknown_action, "
            "illegal_action, malformed, duplicate, not_yours, disconnected, no_show",
        ),
        (["match", "list", "--limit", "0"], "error: --limit must be at least 1, not 0"),
        (["match", "list", "--tournament", "999"], "error: no tournament 999"),
        (["tournament", "show", "999"], "error: no tournament 999"),
        (
            ["tournament", "show", "1", "--table", "pairs"],
            "error: unknown --table 'pairs'; allowed: standings, cross",
        ),
        (
            ["tournament", "show", "1", "--json", "--csv"],
            "error: --json and --csv print different things; choose one",
        ),
        (["bot", "show", "ghost", "--recent", "-1"], "error: --recent must be 0 or more, not -1"),
    ],
)
def test_bad_values_are_one_line_naming_what_is_allowed(
    played: Played, args: list[str], line: str
) -> None:
    run = cli(*args, db=played.db, code=2)
    assert run.stderr.splitlines() == [line] and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["match", "list", "--bot", "ghost"], "error: no bot 'ghost'; registered bots: flaky,"),
        (["bot", "show", "ghost"], "error: no bot 'ghost'; registered bots: flaky,"),
        (["match", "list", "--game", "chess"], "error: unknown game 'chess'"),
    ],
)
def test_unknown_names_say_so(played: Played, args: list[str], start: str) -> None:
    run = cli(*args, db=played.db, code=2)
    (only,) = run.stderr.splitlines()
    assert only.startswith(start)
