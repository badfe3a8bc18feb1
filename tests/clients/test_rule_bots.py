"""The rule-following example bots beat random play, in-process, and never answer illegally."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable
from pathlib import Path
from statistics import mean
from types import ModuleType
from typing import Any

import pytest

from games.base import Game
from games.kansas_city import GAME as KANSAS_CITY
from games.kill import GAME as KILL
from games.knives import GAME as KNIVES
from games.ninja_whist import GAME as NINJA_WHIST
from server.codec.protocol import decision_request

EXAMPLES = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples"


def load_bot(filename: str) -> ModuleType:
    """Import an example bot module from its path."""
    spec = importlib.util.spec_from_file_location(filename.removesuffix(".py"), EXAMPLES / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play_match(
    game: Game[Any],
    seed: int,
    bot_seat: int,
    decide: Callable[..., str],
    seats: int | None = None,
    options: dict[str, Any] | None = None,
) -> list[int]:
    """Play one match: the bot in bot_seat, seeded random choices elsewhere; placements."""
    state = game.new_match(seed, seats, options)
    rng = random.Random(seed)
    while not game.is_over(state):
        seat = game.to_act(state)
        actions = game.legal_actions(state)
        if seat == bot_seat:
            request = decision_request(
                game_name=game.spec.name,
                request_id=1,
                match_id="m",
                seat=seat,
                view=game.view(state, seat),
                actions=actions,
                move_ms=1000,
                bank_ms=0,
            ).request
            action_id = decide(request)
            legal = [a.id for a in actions]
            assert action_id in legal, f"illegal {action_id!r}, legal {legal}"
        else:
            action_id = rng.choice(actions).id
        game.apply(state, action_id)
    return list(game.result(state).ranks)


def placements(game: Game[Any], filename: str, matches: int) -> tuple[float, float]:
    """Mean placement of the bot and of the random seats, rotating the bot's seat."""
    decide = load_bot(filename).decide
    seats = game.spec.default_seats
    bot_ranks: list[int] = []
    random_ranks: list[int] = []
    for seed in range(matches):
        bot_seat = seed % seats
        ranks = play_match(game, 1000 + seed, bot_seat, decide)
        bot_ranks.append(ranks[bot_seat])
        random_ranks += [r for s, r in enumerate(ranks) if s != bot_seat]
    return mean(bot_ranks), mean(random_ranks)


@pytest.mark.parametrize(
    ("game", "filename", "matches"),
    [(KANSAS_CITY, "kansas_city_bot.py", 40), (KNIVES, "knives_bot.py", 40)],
    ids=["kansas-city", "knives"],
)
def test_rule_bot_beats_random(game: Game[Any], filename: str, matches: int) -> None:
    bot, rand = placements(game, filename, matches)
    print(f"{game.spec.name}: rule bot mean placement {bot:.2f}, random {rand:.2f}")
    assert bot <= rand - 0.5


@pytest.mark.parametrize(
    ("game", "filename", "seats", "options"),
    [
        (KANSAS_CITY, "kansas_city_bot.py", 5, {"hands": 2}),
        (KANSAS_CITY, "kansas_city_bot.py", 4, {"hands": 2, "numbers_public": False}),
        (KNIVES, "knives_bot.py", 5, {"simplified_rules": True, "simplified_scoring": True}),
        (KNIVES, "knives_bot.py", 5, {"solo_mode": "info_only", "trumps_one_suit": True}),
        (KNIVES, "knives_bot.py", 5, {"leaster_bank_reveal": True, "leaster_needs_trick": True}),
    ],
)
def test_rule_bot_stays_legal_under_options(
    game: Game[Any], filename: str, seats: int, options: dict[str, Any]
) -> None:
    decide = load_bot(filename).decide
    for seed in range(10):
        play_match(game, 2000 + seed, seed % seats, decide, seats, options)


def test_ninja_whist_bot_beats_random() -> None:
    bot, rand = placements(NINJA_WHIST, "ninja_whist_bot.py", 40)
    print(f"ninja-whist: rule bot mean placement {bot:.2f}, random {rand:.2f}")
    assert bot <= rand - 1.0


@pytest.mark.parametrize(
    ("seats", "options"),
    [(3, {}), (6, {"eldest_leads": True}), (7, {"double_max": True}), (8, {"double_max": True})],
)
def test_ninja_whist_bot_stays_legal_under_options(seats: int, options: dict[str, Any]) -> None:
    decide = load_bot("ninja_whist_bot.py").decide
    for seed in range(6):
        play_match(NINJA_WHIST, 3000 + seed, seed % seats, decide, seats, options)


def test_kill_bot_beats_random() -> None:
    bot, rand = placements(KILL, "kill_bot.py", 40)
    print(f"kill: rule bot mean placement {bot:.2f}, random {rand:.2f}")
    assert bot <= rand - 1.0


@pytest.mark.parametrize(
    ("seats", "options"),
    [
        (3, {}),
        (4, {"fixed_suits": True, "first_orbit_draw_only": True}),
        (3, {"target": 31, "turn_cap": 20, "max_rounds": 3}),
    ],
)
def test_kill_bot_stays_legal_under_options(seats: int, options: dict[str, Any]) -> None:
    decide = load_bot("kill_bot.py").decide
    for seed in range(10):
        play_match(KILL, 4000 + seed, seed % seats, decide, seats, options)
