"""Output that reads in a terminal (issue 31, item 6): at COLUMNS=100 every table fits, with
the columns it hid named and `--wide` bringing them back; no empty tables; `match show` hand
by hand and trick by trick; `tournament status` in words; `tournament run` ends with its own
standings; `tournament show` and `match list` without an id mean the latest tournament."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from games.registry import get_game
from tournaments.models import TournamentStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
WIDTH = 100
# Long enough that the old tables needed ~145 columns.
RUN_BOTS = ["a-rule-following-bot", "a-random-bot-number-1", "a-random-bot-number-2"]
KNIVES_BOTS = [f"a-knives-player-number-{i}" for i in range(1, 6)]


def cli(*args: str, db: str, code: int = 0, columns: int = WIDTH) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "LINES"}
        | {"COLUMNS": str(columns), "CARDSHARK_DB": db},
    )
    assert run.returncode == code, run.stdout + run.stderr
    return run.stdout


def too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


def play(store: Store, match_id: int, fault_at: int | None = None) -> None:
    """Play a stored match in process with seeded random legal moves and record it as the
    referee would (fault_at: the acting seat is charged a timeout at that decision)."""
    detail = store.match_detail(match_id)
    game = get_game(detail.tournament.game)
    state = game.new_match(detail.match.seed, len(detail.match.seats), detail.tournament.options)
    rng = random.Random(match_id)
    faults: list[dict[str, Any]] = []
    while (seat := game.to_act(state)) is not None:
        action = rng.choice(game.legal_actions(state)).id
        if len(state.history) == fault_at:
            faults.append(
                {
                    "decision": fault_at,
                    "seat": seat,
                    "kind": "timeout",
                    "detail": "no reply in 1000 ms",
                    "fallback": action,
                }
            )
        game.apply(state, action)
    scores = game.result(state).scores
    store.start_match(match_id)
    store.record_result(
        match_id,
        [
            SeatOutcome(float(score), sum(f["seat"] == s for f in faults))
            for s, score in enumerate(scores)
        ],
        record={"actions": list(state.history), "move_ms": [], "faults": faults},
    )


@dataclass(frozen=True)
class Field:
    """The database and what the commands printed while it was made."""

    db: str
    earlier: int  # knaves, an entrant ("old-timer") the run's standings must not show
    run: int  # a real `tournament run` of example bot processes, at COLUMNS=100
    run_out: str
    knives: int  # five seats: five place columns, a fault
    latest: int  # interrupted after 2 of its matches


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Field:
    db = f"sqlite:///{tmp_path_factory.mktemp('terminal') / 'cs.db'}"
    rules, rand = (f"{sys.executable} {EXAMPLES / s}" for s in ("knaves_bot.py", "random_bot.py"))
    with Store(db) as store:
        for name in ["old-timer", *RUN_BOTS, *KNIVES_BOTS]:
            store.add_bot(name, rules if name == RUN_BOTS[0] else rand)
        earlier = store.create_tournament("knaves", ["old-timer", *RUN_BOTS[1:]], seed=1).id
        assert earlier is not None
        for match in store.matches(earlier):
            play(store, match.id or 0)
    run_out = cli(
        "tournament", "run", "knaves", "--bots", ",".join(RUN_BOTS), "--seed", "3",
        "--sandbox", "none", db=db,
    )  # fmt: skip
    with Store(db) as store:
        run = max(t.id or 0 for t in store.list_tournaments())
        knives = store.create_tournament("knives", KNIVES_BOTS, seed=2).id
        assert knives is not None
        for i, match in enumerate(store.matches(knives)):
            play(store, match.id or 0, fault_at=5 if i == 0 else None)
        latest = store.create_tournament("knaves", RUN_BOTS, seed=4, options={}).id
        assert latest is not None
        for match in store.matches(latest)[:2]:
            play(store, match.id or 0)
        store.set_tournament_status(latest, TournamentStatus.INTERRUPTED)
    return Field(db, earlier, run, run_out, knives, latest)


def test_every_table_fits_100_columns_and_names_what_it_hid(field: Field) -> None:
    first_knives = str(field_first_match(field, field.knives))
    commands = [
        ["games"],
        ["bot", "list"],
        ["rankings", "knaves"],
        ["rankings", "knives"],
        ["tournament", "list"],
        ["tournament", "show", str(field.run)],
        ["tournament", "show", str(field.knives)],
        ["tournament", "show"],
        ["tournament", "status", str(field.latest)],
        ["match", "list"],
        ["match", "list", "--tournament", "all"],
        ["match", "show", first_knives],
        ["bot", "show", KNIVES_BOTS[0]],
        ["bot", "show", RUN_BOTS[0]],
    ]
    assert too_wide(field.run_out) == []
    for command in commands:
        out = cli(*command, db=field.db)
        assert too_wide(out) == [], (command, too_wide(out))
    knives = cli("tournament", "show", str(field.knives), db=field.db)
    hid = re.search(r"^hidden to fit 100 columns: (.*?); --wide shows them$", flat(knives), re.M)
    assert hid and "5th" in hid.group(1).split(", ")
    assert "voided" not in knives  # none were: no line saying so


def flat(text: str) -> str:
    """The text with the lines rich wrapped at the width joined again: a line is continued
    when the next one's first word would not have fitted after it."""
    out: list[str] = []
    last = ""
    for line in (line.rstrip() for line in text.splitlines()):
        word = line.split(" ", 1)[0]
        table = any(x[:1] in set("┏┃┡│└") for x in (line, last))
        if out and word and not table and len(last) + 1 + len(word) > WIDTH:
            out[-1] += " " + line
        else:
            out.append(line)
        last = line
    return "\n".join(out)


def headers(text: str) -> set[str]:
    """Every table's column headers."""
    return {
        cell.strip()
        for line in text.splitlines()
        if line.startswith("┃")
        for cell in line.split("┃")
    } - {""}


def field_first_match(field: Field, tournament: int) -> int:
    with Store(field.db) as store:
        return min(m.id or 0 for m in store.matches(tournament))


def test_wide_shows_every_column(field: Field) -> None:
    knives = str(field.knives)
    narrow = cli("tournament", "show", knives, db=field.db)
    wide = cli("tournament", "show", knives, "--wide", db=field.db)
    hidden = {"1st", "5th", "forfeits", "σ before → after"}
    assert not hidden & headers(narrow) and hidden <= headers(wide)
    # the cross-table: one row per pair when narrow, the bots as columns when wide
    assert {"A", "B"} <= headers(narrow) and not set(KNIVES_BOTS) & headers(narrow)
    assert set(KNIVES_BOTS) <= headers(wide) and "one row per pair" not in wide
    listed = cli("match", "list", "--tournament", "all", db=field.db)
    everything = cli("match", "list", "--tournament", "all", "--wide", db=field.db)
    assert "finished" not in headers(listed) and "finished" in headers(everything)
    assert re.search(r"^hidden to fit 100 columns: .*finished", flat(listed), re.M)


def test_an_empty_database_prints_one_line_not_an_empty_table(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(db).close()
    for command, said in [
        (["tournament", "list"], "no tournaments yet"),
        (["bot", "list"], "no bots yet"),
        (["rankings", "knaves"], "no rated knaves matches yet"),
        (["match", "list"], "no matches"),
        (["match", "list", "--tournament", "all"], "no matches"),
    ]:
        out = cli(*command, db=db)
        assert len(out.splitlines()) == 1 and out.startswith(said), (command, out)
    shown = subprocess.run(
        [sys.executable, "-m", "server.cli", "tournament", "show", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 2 and "no tournaments yet" in shown.stderr


def test_match_show_goes_hand_by_hand_and_trick_by_trick(field: Field) -> None:
    with Store(field.db) as store:
        match = store.matches(field.run)[0]
        names = store.match_detail(match.id or 0).bot_names
    seated = [names[b] for b in match.seats]
    game = get_game("knaves")
    state = game.replay(match.seed, 3, {}, (match.record or {})["actions"])
    records = game.hand_records(state)
    assert too_wide(cli("match", "show", str(match.id), db=field.db)) == []
    out = cli("match", "show", str(match.id), db=field.db, columns=200)  # a trick on a line
    hands = re.findall(r"^hand (\d+): dealer (\S+), trump (\w+) \(turned (\w\w)\)$", out, re.M)
    suits = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
    # counted from 1, as the web page counts them
    assert hands == [
        (str(r["hand"] + 1), seated[r["dealer"]], suits[r["turned"][1]], r["turned"])
        for r in records
    ]
    tricks = re.findall(r"^ +(\d+) (.+?) → (\S+)$", out, re.M)
    expected = [
        (
            str(k),
            " · ".join(f"{seated[(t['leader'] + i) % 3]} {c}" for i, c in enumerate(t["cards"])),
            seated[t["winner"]],
        )
        for r in records
        for k, t in enumerate(r["tricks"], start=1)
    ]
    assert tricks == expected
    running = [0, 0, 0]
    for r in records:
        running = [a + b for a, b in zip(running, r["points"], strict=True)]
        shown = ", ".join(f"{seated[s]} {r['points'][s]:+d} ({running[s]})" for s in range(3))
        assert f"hand {r['hand'] + 1} ended: points (running score) {shown}" in out


def test_match_show_names_a_fault_under_its_trick(field: Field) -> None:
    first = field_first_match(field, field.knives)
    out = cli("match", "show", str(first), db=field.db)
    assert re.search(r"^ +fault timeout \(seat \d a-knives-player-number-\d\): no reply", out, re.M)
    assert "strong suit" in out


def test_tournament_status_is_in_words(field: Field) -> None:
    out = cli("tournament", "status", str(field.latest), db=field.db)
    assert "{" not in out and "None" not in out
    lines = out.splitlines()
    assert lines[0] == f"tournament {field.latest}: knaves round robin, 3 seats"
    assert f"entrants: {', '.join(RUN_BOTS)}" in lines
    assert "schedule: 1 round of every table; options: the game's defaults" in lines
    assert "interrupted: 2 of 6 matches played (4 pending)" in lines
    assert lines[-1] == f"resume with: cardshark tournament resume {field.latest}"


def test_a_run_ends_with_its_own_standings_and_the_command_that_shows_more(field: Field) -> None:
    lines = field.run_out.splitlines()
    assert re.fullmatch(rf"tournament {field.run}: knaves, 3 bots, 6 matches, match ids \d+–\d+",
                        lines[0])  # fmt: skip
    title = next(
        i for i, line in enumerate(lines) if f"Standings of tournament {field.run}" in line
    )
    table = lines[title:]
    rows = [line for line in table if line.startswith("│")]
    assert sorted(row.split("│")[2].strip() for row in rows) == sorted(RUN_BOTS)
    assert "old-timer" not in field.run_out  # the game's leaderboard has it; this run did not
    assert lines[-1].startswith(f"more: cardshark tournament show {field.run} --wide  (every")


def test_without_an_id_show_and_list_mean_the_latest_tournament(field: Field) -> None:
    assert cli("tournament", "show", db=field.db) == cli(
        "tournament", "show", str(field.latest), db=field.db
    )
    listed = cli("match", "list", db=field.db)
    assert listed.startswith(f"tournament {field.latest} (knaves), the latest")
    with Store(field.db) as store:
        ids = sorted(m.id or 0 for m in store.matches(field.latest))
    shown = [int(n) for n in re.findall(r"^│ +(\d+) │", listed, re.M)]
    assert sorted(shown) == ids
    knives = cli("match", "list", "--game", "knives", db=field.db)
    assert knives.startswith(f"tournament {field.knives} (knives), the latest")
