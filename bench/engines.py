"""Random-playout speed of every registered game on one core, beside OpenSpiel's engines.

Usage: python bench/engines.py [--seconds S] [--json] [GAME...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.registry import all_games, get_game  # noqa: E402


def measure_game(name: str, seconds: float) -> dict[str, float]:
    """Play seeded random matches of one game for about `seconds`; count matches and decisions."""
    game = get_game(name)
    rng = random.Random(1)
    matches = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_match(rng.randrange(2**62))
        to_act, legal, apply, choice = game.to_act, game.legal_actions, game.apply, rng.choice
        while to_act(state) is not None:
            apply(state, choice(legal(state)))
            decisions += 1
        matches += 1
    elapsed = time.perf_counter() - start
    return {"matches_per_s": matches / elapsed, "decisions_per_s": decisions / elapsed}


def measure_openspiel(name: str, seconds: float) -> dict[str, float] | None:
    """The same loop over an OpenSpiel game (chance outcomes sampled, not counted)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(name)
    rng = random.Random(1)
    matches = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        matches += 1
    elapsed = time.perf_counter() - start
    return {"matches_per_s": matches / elapsed, "decisions_per_s": decisions / elapsed}


def main() -> None:
    """Print the figures as a table, or one JSON object with --json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("games", nargs="*", help="games to measure (default: all registered)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the figures claim
    names = args.games or list(all_games())
    out: dict[str, Any] = {name: measure_game(name, args.seconds) for name in names}
    reference = {g: measure_openspiel(g, args.seconds) for g in ("hearts", "oh_hell")}
    if all(v is not None for v in reference.values()):
        out["openspiel"] = reference
        oh_hell = reference["oh_hell"]["decisions_per_s"]  # type: ignore[index]
        for name in names:
            out[name]["ratio_to_oh_hell"] = out[name]["decisions_per_s"] / oh_hell
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{'game':<14}{'matches/s':>12}{'decisions/s':>14}{'vs oh_hell':>12}")
    for name in names:
        row = out[name]
        ratio = f"{row['ratio_to_oh_hell']:.2f}" if "ratio_to_oh_hell" in row else "-"
        print(f"{name:<14}{row['matches_per_s']:>12.1f}{row['decisions_per_s']:>14.0f}{ratio:>12}")
    for name, ref in (out.get("openspiel") or {}).items():
        print(f"{'os:' + name:<14}{ref['matches_per_s']:>12.1f}{ref['decisions_per_s']:>14.0f}")


if __name__ == "__main__":
    main()
