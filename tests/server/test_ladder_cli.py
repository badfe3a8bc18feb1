"""`cardshark ladder` end to end: real bot processes over the referee, a real SQLite file.

A ladder of house bots of graded noise is ordered by their noise; a bot entered while the
ladder runs sits at the next table picked, a retired one at none; one bot per author when
asked; and a ladder killed with SIGKILL goes on with no set lost or rated twice, its
ratings those a recompute gives.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from server.bots.house import parse_house
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
GAME = "knaves"
BRISK_BOT = ROOT / "tests" / "server" / "bots" / "brisk_bot.py"  # 4 ms a decision


def cli(*args: str, db: str, code: int = 0) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == code, run.stdout + run.stderr
    return run.stdout + run.stderr


def start(*args: str, db: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", "ladder", "run", GAME, *args, "--db", db],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


# A ladder run's plain progress line (stderr not a terminal), as `tournament run` prints its.
PROGRESS = re.compile(
    r"ladder (\d+): (\d+)(?:/(\d+))? sets, (\d+) matches(?:, \d+\.\d\d/s)?, \d+\.\d s"
)


def progress(out: str) -> list[tuple[int, int | None, int]]:
    """The progress lines in a run's output: sets done, sets asked (or None), matches."""
    return [
        (int(m[2]), int(m[3]) if m[3] else None, int(m[4]))
        for m in map(PROGRESS.fullmatch, out.splitlines())
        if m
    ]


def progress_lines(process: subprocess.Popen[str]) -> Iterator[tuple[int, int | None, int]]:
    """The ladder's progress lines as it prints them, until it exits."""
    assert process.stdout is not None
    for line in process.stdout:
        yield from progress(line.rstrip("\n"))


def until(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Poll the condition until it holds; fail if the process ends first or after 120 s."""
    end = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, f"the ladder exited ({process.returncode}) first"
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def house(noise: float) -> str:
    return f"house:{GAME}:noise={noise:g}"


def house_name(noise: float) -> str:
    return parse_house(house(noise)).bot_name


def tables(db: str) -> dict[int, set[str]]:
    """Per set number, the names of the bots at its table."""
    with Store(db) as store:
        (ladder,) = [t for t in store.list_tournaments() if t.format == "ladder"]
        names = {b.id: b.name for b in store.list_bots(include_removed=True)}
        out: dict[int, set[str]] = {}
        for match in store.matches(ladder.id or 0, include_voided=False):
            out.setdefault(match.round, set()).update(names[b] for b in match.seats)
        return out


def sets_so_far(db: str) -> int:
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None
        return ladder.rounds


def test_a_ladder_of_house_bots_orders_them_by_noise_and_its_top_plays_a_final(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    noises = [0.0, 0.4, 0.7, 1.0]
    bots = ",".join(house(n) for n in reversed(noises))
    out = cli("ladder", "run", GAME, "--bots", bots, "--sets", "24", "--seed", "7", db=db)
    # a line a set (24 asked: a twentieth rounds to one), then what the run played
    assert progress(out) == [(k, 24, 6 * k) for k in range(1, 25)], out
    assert re.search(
        r"^ladder 1: played 24 sets, 144 matches in \d+\.\d s "
        r"\(24 sets, 144 matches in all\)$",
        out,
        re.MULTILINE,
    ), out
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None and ladder.id is not None and ladder.rounds == 24
        field = sorted(store.ladder_field(ladder.id), key=lambda e: -e.mu)
        assert [e.bot.name for e in field] == [house_name(n) for n in noises]
        assert store.tournament_status(ladder.id).finished == 24 * 6
        # the newcomers were seated first: each bot sat in one of the first two sets
        firsts = tables(db)
        assert firsts[0] | firsts[1] == {house_name(n) for n in noises}
    assert "Ladder 1: knaves, 24 sets" in out
    with Store(db) as store:
        best = sorted(store.ladder_field(1), key=lambda e: -(e.mu - 3 * e.sigma))[:3]
    final = cli(
        "ladder", "final", GAME, "--top", "3", "--until-confident", "0.9", "--max-rounds", "2",
        db=db,
    )  # fmt: skip
    assert "final of ladder 1: tournament 2, its top 3 frozen: " in final
    assert "until-confident 0.9: " in final, final
    with Store(db) as store:
        assert [b.name for b in store.tournament_entrants(2)] == [e.bot.name for e in best]
        assert store.goal(2) is not None and store.get_tournament(2).status == "finished"
        assert store.get_tournament(1).rounds == 24  # the ladder itself is left as it was


def test_a_bot_entered_while_it_runs_plays_at_once_and_a_retired_one_no_more(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    first = [house(n) for n in (0.0, 0.3, 0.6, 0.9)]
    ladder = start("--bots", ",".join(first), "--seed", "3", db=db)
    try:
        lines = progress_lines(ladder)
        # without --sets a line every 10 sets: every bot is past its newcomer sets
        assert next(lines) == (10, None, 60)
        cli("ladder", "add", GAME, house(1.0), db=db)
        joined = sets_so_far(db)
        cli("bot", "remove", house_name(0.3), db=db)
        retired = sets_so_far(db)
        later = next(line for line in lines if line[0] >= retired + 3)
        assert later[0] % 10 == 0 and later == (later[0], None, 6 * later[0])
    finally:
        ladder.send_signal(signal.SIGINT)
        try:
            rest, _ = ladder.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            ladder.kill()
            raise
    # one line says what the run played, then how it stopped
    played_line, stopped = rest.strip().splitlines()[-2:]
    assert re.fullmatch(
        r"ladder 1: played (\d+) sets, (\d+) matches in \d+\.\d s "
        r"\(\1 sets, \2 matches in all\)",
        played_line,
    ), rest
    assert stopped.startswith("ladder 1 stopped by Ctrl-C with "), rest
    played = tables(db)
    # the set in play when it was entered may have been picked before: the next one seats it
    assert house_name(1.0) in played[joined] | played[joined + 1]
    assert all(house_name(0.3) not in played[k] for k in played if k > retired)
    assert ladder.returncode == 130


def test_one_per_author_never_seats_two_bots_of_an_author_together(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    names = []
    for author in ("ann", "bob", "cy"):
        cli("author", "add", author, db=db)
        for i, noise in enumerate((0.2, 0.8)):
            name = f"{author}{i}"
            command = parse_house(house(noise)).command
            cli("bot", "add", name, "--command", command, "--author", author, db=db)
            names.append(name)
    cli(
        "ladder", "run", GAME, "--bots", ",".join(names), "--sets", "10", "--one-per-author",
        "--seed", "4", db=db,
    )  # fmt: skip
    played = tables(db)
    assert len(played) == 10
    for seated in played.values():
        assert len({name[:-1] for name in seated}) == 3, seated
    assert len(set().union(*played.values())) == 6  # every bot played


def test_a_killed_ladder_goes_on_with_no_set_lost_or_rated_twice(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    cli("bot", "add", "slow", "--command", f"{sys.executable} {BRISK_BOT}", db=db)
    bots = ",".join([house(0.0), house(1.0), "slow"])  # every set seats all three
    # 20 sets asked (it is killed long before): a progress line a set
    ladder = start("--bots", bots, "--seed", "9", "--sets", "20", db=db)
    try:
        assert next(progress_lines(ladder)) == (1, 20, 6)
        with Store(db) as store:
            until(lambda: any(m.status == "running" for m in store.pending_matches(1)), ladder)
    finally:
        ladder.send_signal(signal.SIGKILL)  # in the middle of a set: its matches in play
        ladder.wait(timeout=60)
    killed_at = sets_so_far(db)
    with Store(db) as store:
        assert {m.round for m in store.pending_matches(1)} == {killed_at - 1}
    out = cli("ladder", "run", GAME, "--sets", "2", db=db)
    assert "ladder 1: knaves" in out
    with Store(db) as store:
        ladder_row = store.latest_ladder(GAME)
        assert ladder_row is not None and ladder_row.id is not None
        assert ladder_row.rounds == killed_at + 2
        finished = Counter(
            m.round for m in store.matches(ladder_row.id, include_voided=False)
            if m.status == "finished"
        )  # fmt: skip
        assert finished == {k: 6 for k in range(killed_at + 2)}
        assert store.pending_matches(ladder_row.id) == []
        history = Counter(h.match_id for h in store.rating_history(GAME))
        assert sum(history.values()) == 3 * (killed_at + 2)  # each set rated once, 3 bots
        before = {b: (r.mu, r.sigma) for b, r in store.ratings(GAME).items()}
        store.recompute(GAME)
        after = {b: (r.mu, r.sigma) for b, r in store.ratings(GAME).items()}
    assert after.keys() == before.keys()
    for bot, (mu, sigma) in before.items():
        assert abs(after[bot][0] - mu) < 1e-9 and abs(after[bot][1] - sigma) < 1e-9


def test_a_ladder_on_workers_without_postgresql_is_refused_storing_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    out = cli("ladder", "run", GAME, "--bots", house(0.5), "--workers", db=db, code=2)
    assert out.strip() == "error: a ladder on workers needs PostgreSQL (--db postgresql://...)"
    with Store(db) as store:
        assert store.list_tournaments() == [] and store.list_bots() == []


def last_error(db: str) -> str:
    """`ladder status`'s last-error line."""
    (line,) = [x for x in cli("ladder", "status", GAME, db=db).splitlines() if "last error" in x]
    return line


def stamped(line: str, before: datetime, after: datetime) -> tuple[str, str]:
    """What a `last error: TIME UTC (SINCE since): MESSAGE` line says since and its message,
    its time checked within [before, after] (to the second)."""
    found = re.fullmatch(r"last error: (.{19}) UTC \((.+?) since\): (.*)", line)
    assert found is not None, line
    when = datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert before.replace(microsecond=0) <= when <= after, line
    return found[2], found[3]


def test_ladder_status_shows_a_bot_left_out_as_the_last_error(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    bots = ",".join(house(n) for n in (0.0, 0.5, 1.0))
    cli("ladder", "run", GAME, "--bots", bots, "--sets", "1", "--seed", "5", db=db)
    assert last_error(db) == "last error: none"
    crash = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    cli("bot", "add", "broken", "--command", crash, db=db)
    cli("ladder", "add", GAME, "broken", db=db)
    before = datetime.now(UTC)
    out = cli("ladder", "run", GAME, "--sets", "1", db=db)
    after = datetime.now(UTC)
    assert out.count("bot 'broken' is not playing: ") == 1, out  # once, with its reason
    since, message = stamped(last_error(db), before, after)
    assert message == "bot 'broken' left out: exited with status 3 before saying Hello"
    assert sets_so_far(db) == 2  # the others played on
    assert since == "1 set completed"  # the set played after the bot was left out
    cli("bot", "remove", "broken", db=db)  # never played: removed, so out of the field
    cli("ladder", "run", GAME, "--sets", "1", db=db)
    # a clean run keeps the error, but says it is older news
    assert stamped(last_error(db), before, datetime.now(UTC)) == ("2 sets completed", message)


FAILING_SETS = """
import sys

import server.play.ladder


async def void_thrice(store, arena, match, *args, **kwargs):
    # what play_until_not_voided raises when the server voids a match MAX_VOIDS times
    raise RuntimeError(f"match {match.schedule_index} voided 3 times; stopping")


server.play.ladder.play_until_not_voided = void_thrice
sys.argv[0] = "cardshark"
from server.cli import main

main()
"""


def test_a_set_that_cannot_be_played_stops_the_ladder_in_one_line_and_is_its_last_error(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    script = tmp_path / "failing_cli.py"
    script.write_text(FAILING_SETS)
    bots = ",".join(house(n) for n in (0.0, 0.5, 1.0))
    cli("ladder", "run", GAME, "--bots", bots, "--sets", "1", "--seed", "5", db=db)
    before = datetime.now(UTC)
    run = subprocess.run(
        [sys.executable, str(script), "ladder", "run", GAME, "--sets", "1", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    after = datetime.now(UTC)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    # set 2 is matches 6 to 11 (6 rotations of 3 seats): whichever failed first stops it
    said = "set 2 could not be played: RuntimeError: match ([6-9]|1[01]) voided 3 times; stopping"
    # what the run played, then why it stopped, and nothing else
    assert re.fullmatch(
        r"ladder 1: played 0 sets, 0 matches in \d+\.\d s \(1 set, 6 matches in all\)\n"
        f"error: ladder 1: {said}",
        run.stderr.strip(),
    ), run.stderr
    since, message = stamped(last_error(db), before, after)
    assert re.fullmatch(said, message) and since == "no set completed"


def test_on_a_terminal_the_run_shows_a_bar_of_sets_and_matches_as_tournament_run_does(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    bots = ",".join(house(n) for n in (0.0, 0.5, 1.0))
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "ladder", "run", GAME, "--bots", bots]
        + ["--sets", "3", "--seed", "5", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        # rich takes these for a terminal that does not animate: the bar's last state only
        env={**os.environ, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0", "COLUMNS": "160"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    shown = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", run.stdout)
    assert re.search(r"^ladder 1 ━+ 3/3 sets 18 matches \d+\.\d\d/s ", shown, re.MULTILINE), shown
    assert PROGRESS.search(run.stderr) is None  # no plain lines as well
    assert re.fullmatch(
        r"ladder 1: played 3 sets, 18 matches in \d+\.\d s \(3 sets, 18 matches in all\)",
        run.stderr.strip(),
    ), run.stderr


RECORDING_PICKS = """
import json
import sys

import server.play.ladder
from tournaments.matchmaking import pick_table

LOG = sys.argv.pop(1)


def recording(bots, seats, rng, rule, one_per_author, **kwargs):
    table = pick_table(bots, seats, rng, rule, one_per_author, **kwargs)
    meetings = sorted([a, b, n] for (a, b), n in (kwargs.get("meetings") or {}).items())
    with open(LOG, "a") as log:
        log.write(json.dumps({"meetings": meetings, "table": table}) + "\\n")
    return table


server.play.ladder.pick_table = recording
sys.argv[0] = "cardshark"
from server.cli import main

main()
"""


def test_each_pick_is_given_the_meetings_of_the_sets_before_it(tmp_path: Path) -> None:
    import json

    db = f"sqlite:///{tmp_path / 'cs.db'}"
    script, log = tmp_path / "recording_cli.py", tmp_path / "picks.jsonl"
    script.write_text(RECORDING_PICKS)
    bots = ",".join(house(n) for n in (0.0, 0.25, 0.5, 0.75, 1.0))
    run = subprocess.run(
        [sys.executable, str(script), str(log), "ladder", "run", GAME, "--bots", bots]
        + ["--sets", "5", "--seed", "5", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    picks = [json.loads(line) for line in log.read_text().splitlines()]
    assert [len(p["table"]) for p in picks] == [3] * 5
    met: Counter[tuple[int, int]] = Counter()
    for pick in picks:
        # what the run passed is what the sets before it seated, pair by pair
        assert {(a, b): n for a, b, n in pick["meetings"]} == dict(met)
        table = sorted(pick["table"])
        met.update((a, b) for i, a in enumerate(table) for b in table[i + 1 :])
    with Store(db) as store:
        ladder = store.latest_ladder(GAME)
        assert ladder is not None and ladder.id is not None
        assert store.ladder_meetings(ladder.id) == dict(met)
