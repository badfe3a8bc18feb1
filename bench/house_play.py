"""One match of house policies in process: the rule bot answering the referee's own request,
a seeded random legal action instead at each seat's noise rate (shared by the benches)."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Sequence
from typing import Any

from games.registry import get_game
from server.codec import protocol


def rule_bot(name: str) -> Callable[[Any], str]:
    """The game's example rule bot's decide (clients/python/examples/<game>_bot.py)."""
    module = importlib.import_module(name.replace("-", "_") + "_bot")
    decide: Callable[[Any], str] = module.decide
    return decide


def play_noisy(name: str, seed: int, noise: Sequence[float], stream: str) -> list[float]:
    """The final scores of one match on `seed`, seat s playing at noise[s]; `stream` names
    the match's random streams (and its match id in the requests)."""
    game = get_game(name)
    decide = rule_bot(name)
    streams = [random.Random(f"{stream}:{s}") for s in range(len(noise))]
    state = game.new_match(seed, len(noise))
    while (seat := game.to_act(state)) is not None:
        legal = game.legal_actions(state)
        rng = streams[seat]
        if rng.random() < noise[seat]:
            game.apply(state, rng.choice(legal))
            continue
        msg = protocol.decision_request(
            game_name=name,
            request_id=0,
            match_id=stream,
            seat=seat,
            view=game.view(state, seat),
            actions=legal,
            move_ms=0,
            bank_ms=0,
        )
        game.apply(state, decide(msg.request))
    return [float(x) for x in game.scores(state)]
