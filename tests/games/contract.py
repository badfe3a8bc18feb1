"""Helpers shared by the contract and golden tests: random seeded playouts and view scans."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from games.base import Game, MatchState


def leaves(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from leaves(v)
    elif isinstance(value, list | tuple | set):
        for v in value:
            yield from leaves(v)


def playout(
    game: Game[Any], seed: int, seats: int, options: dict[str, Any], choice_seed: int
) -> Iterator[tuple[MatchState, int]]:
    """Play a match with seeded random legal choices, yielding (state, actor) before each move."""
    state = game.new_match(seed, seats, options)
    rng = random.Random(choice_seed)
    bound = game.decision_bound(seats, state.options)
    for _ in range(bound):
        actor = game.to_act(state)
        if actor is None:
            return
        yield state, actor
        game.apply(state, rng.choice(game.legal_actions(state)))
    assert game.to_act(state) is None, f"{game.spec.name}: no end within {bound} decisions"
