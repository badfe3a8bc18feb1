"""Golden transcripts: a seeded match with every view and action; regenerate with
``python -m tests.games.golden [GAME...]`` only when a rules change is intended."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from games.base import Game
from games.registry import all_games, get_game

GOLDEN_DIR = Path(__file__).parents[1] / "golden"
SEED = 20261122
CHOICE_SEED = 7


def transcript(game: Game[Any]) -> list[str]:
    """The golden lines of a game: one JSON object per decision, then the result."""
    seats = game.spec.default_seats
    state = game.new_match(SEED, seats, {})
    rng = random.Random(CHOICE_SEED)
    lines = [
        json.dumps(
            {"game": game.spec.name, "seed": SEED, "seats": seats, "options": state.options},
            sort_keys=True,
        )
    ]
    step = 0
    while (actor := game.to_act(state)) is not None:
        legal = game.legal_actions(state)
        action = rng.choice(legal)
        lines.append(
            json.dumps(
                {
                    "step": step,
                    "seat": actor,
                    "view": game.view(state, actor),
                    "legal": [a.fields() for a in legal],
                    "action": action.id,
                },
                sort_keys=True,
            )
        )
        game.apply(state, action)
        step += 1
    result = game.result(state)
    lines.append(
        json.dumps(
            {
                "hands": game.hand_records(state),
                "scores": list(result.scores),
                "ranks": list(result.ranks),
                "final_views": [game.view(state, s) for s in range(seats)],
            },
            sort_keys=True,
        )
    )
    return lines


def path_for(name: str) -> Path:
    """Where the golden transcript of a game lives."""
    return GOLDEN_DIR / f"{name}.jsonl"


if __name__ == "__main__":
    names = sys.argv[1:] or list(all_games())
    for name in names:
        path_for(name).write_text("\n".join(transcript(get_game(name))) + "\n")
        print(f"wrote {path_for(name)}")
