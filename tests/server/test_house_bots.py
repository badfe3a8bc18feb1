"""House bots of known strength: `house:GAME:noise=X` names, the noisy rule bot, and
tournaments that seat them by name."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from server.bots.house import HouseBot, HouseNameError, house_bot, parse_house, resolve_names
from server.codec.protocol import bot_random_seed
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"


def cli(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def load_example(name: str) -> ModuleType:
    sys.path.insert(0, str(EXAMPLES))  # house_bot imports the rule bots as its neighbours
    try:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize(
    ("text", "game", "noise", "bot_name"),
    [
        ("house:knaves:noise=0.25", "knaves", 0.25, "house-knaves-noise0.25"),
        ("house:knaves:noise=0.50", "knaves", 0.5, "house-knaves-noise0.5"),
        ("house:kansas-city:noise=1", "kansas-city", 1.0, "house-kansas-city-noise1"),
        ("house:kill:noise=-0", "kill", 0.0, "house-kill-noise0"),
        ("house:knives", "knives", 0.0, "house-knives-noise0"),
    ],
)
def test_house_names_parse_to_one_canonical_bot(
    text: str, game: str, noise: float, bot_name: str
) -> None:
    house = parse_house(text)
    assert house == HouseBot(game, noise)
    assert house.bot_name == bot_name
    assert parse_house(house.label) == house
    assert house.command.split()[-2:] == [game, f"{noise:g}"]
    assert "house_bot.py" in house.command


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("house:chess:noise=0", "no game 'chess'"),
        ("house:knaves:noise=1.5", "outside 0 to 1"),
        ("house:knaves:noise=-0.1", "outside 0 to 1"),
        ("house:knaves:noise=nan", "outside 0 to 1"),
        ("house:knaves:noise=lots", "not a number"),
        ("house:knaves:level=2", "expected noise=X"),
        ("house:knaves:noise", "expected noise=X"),
        ("rules", "does not start with"),
    ],
)
def test_a_bad_house_name_says_what_is_allowed(text: str, why: str) -> None:
    with pytest.raises(HouseNameError) as caught:
        parse_house(text)
    message = str(caught.value)
    assert why in message
    assert "house:GAME:noise=X" in message and "knaves" in message and "\n" not in message


def test_house_bots_are_registered_once_and_bad_names_store_nothing(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        with pytest.raises(HouseNameError):
            resolve_names(store, ["house:knaves:noise=0", "house:knaves:noise=9"])
        assert store.list_bots() == []
        names = resolve_names(store, ["house:knaves:noise=0.5", "mine", "house:knaves:noise=.5"])
        assert names == ["house-knaves-noise0.5", "mine", "house-knaves-noise0.5"]
        assert house_bot(store, HouseBot("knaves", 0.5)) == "house-knaves-noise0.5"
        bots = store.list_bots()
        assert [b.name for b in bots] == ["house-knaves-noise0.5"]
        assert bots[0].command == HouseBot("knaves", 0.5).command


def request(match_id: str, seat: int, actions: list[str]) -> Any:
    from cardshark.v1.referee_pb2 import Action, DecisionRequest

    return DecisionRequest(
        match_id=match_id,
        seat=seat,
        legal_actions=[Action(id=a) for a in actions],
        random_seed=bot_random_seed(99, [match_id], seat),  # as a referee would
    )


def test_noise_is_the_rate_of_random_actions_and_a_match_replays_the_same() -> None:
    house = load_example("house_bot")
    actions = [f"play:{i}" for i in range(10)]

    def rules(req: Any) -> str:
        return "play:0"

    for noise in (0.0, 1.0):
        noisy = house.noisy(rules, noise, seed=3)
        chosen = [noisy(request(f"m{i}", 0, actions)) for i in range(400)]
        if noise == 0.0:
            assert set(chosen) == {"play:0"}
        else:  # uniformly random: every action, the rule's no more than its share
            counts = Counter(chosen)
            assert set(counts) == set(actions) and counts["play:0"] < 80
    noisy = house.noisy(rules, 0.25, seed=3)
    chosen = [noisy(request(f"m{i // 20}", i % 3, actions)) for i in range(4000)]
    off_rule = sum(c != "play:0" for c in chosen) / len(chosen)
    assert 0.25 * 0.9 * 0.85 < off_rule < 0.25 * 0.9 * 1.15  # random picks the rule's 1 in 10
    # The same match and seat replay the same choices in a fresh process (a new wrapper),
    # whatever was played before; another seed plays differently.
    fresh = house.noisy(rules, 0.5, seed=3)
    first = [fresh(request("m7", 1, actions)) for _ in range(12)]
    again = house.noisy(rules, 0.5, seed=3)
    for i in range(30):
        again(request(f"other{i}", 0, actions))
    assert [again(request("m7", 1, actions)) for _ in range(12)] == first
    streams = [
        [house.noisy(rules, 0.5, seed=s)(request("m", 0, actions)) for s in range(40)],
        [house.noisy(rules, 0.5, seed=s + 100)(request("m", 0, actions)) for s in range(40)],
    ]
    assert streams[0] != streams[1]


def test_the_house_bot_plays_the_rule_bots_decision_at_noise_zero() -> None:
    house = load_example("house_bot")
    calls: list[str] = []

    def rules(req: Any) -> str:
        calls.append(req.match_id)
        return str(req.legal_actions[-1].id)

    noisy = house.noisy(rules, 0.0, seed=random.Random(5).randrange(100))
    assert noisy(request("m1", 2, ["a", "b"])) == "b"
    assert calls == ["m1"]


def test_a_tournament_of_house_bots_orders_them_by_noise(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    Store(db).close()
    names = ["house:knaves:noise=0", "house:knaves:noise=1", "house:knaves:noise=0.5"]
    run = cli(
        "tournament", "run", "knaves", "--bots", ",".join(names), "--rounds", "8",
        "--seed", "11", db=db,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    with Store(db) as store:
        (tournament,) = store.list_tournaments()
        assert tournament.id is not None
        ids = {b.id: b.name for b in store.tournament_entrants(tournament.id)}
        totals: Counter[str] = Counter()
        for match in store.matches(tournament.id, include_voided=False):
            assert match.result is not None
            for bot, score in zip(match.seats, match.result["scores"], strict=True):
                totals[ids[bot]] += score
    assert set(totals) == {"house-knaves-noise0", "house-knaves-noise1", "house-knaves-noise0.5"}
    assert totals["house-knaves-noise0"] > totals["house-knaves-noise1"]


def test_a_bad_house_name_in_a_tournament_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    Store(db).close()
    run = cli(
        "tournament", "run", "knaves", "--bots",
        "house:knaves:noise=0,house:knaves:noise=2,house:knaves:noise=1", db=db,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "house:knaves:noise=2" in lines[0], run.stderr
    assert "outside 0 to 1" in lines[0] and "house:GAME:noise=X" in lines[0]
    with Store(db) as store:
        assert store.list_bots() == [] and store.list_tournaments() == []
