"""Random-playout speed of every registered game on one core, beside OpenSpiel's engines.

Usage: python bench/engines.py [--seconds S] [--json] [--no-pure] [GAME...]

The engines run as this process imports them: compiled by mypyc where the install could
(`cardshark games --verbose` says). When compiled, each game is measured again as pure
Python right after, in a child on the same core with CARDSHARK_PURE_PYTHON=1 (`pure_*`
figures and `compiled_speedup`; --no-pure skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402
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


def measure_pure(name: str, seconds: float) -> dict[str, float]:
    """The same game measured as pure Python, in a child on this process's core."""
    run = subprocess.run(
        [sys.executable, __file__, "--json", "--no-pure", "--no-openspiel"]
        + ["--seconds", str(seconds), name],
        env=os.environ | {"CARDSHARK_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(run.stdout)
    assert result["engines"].startswith("pure Python"), result["engines"]
    return dict(result[name])


def main() -> None:
    """Print the figures as a table, or one JSON object with --json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("games", nargs="*", help="games to measure (default: all registered)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-pure", action="store_true", help="skip the pure Python figures")
    parser.add_argument("--no-openspiel", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the figures claim
    names = args.games or list(all_games())
    out: dict[str, Any] = {"engines": games.ENGINES.describe()}
    pure = games.ENGINES.compiled and not args.no_pure
    for name in names:
        out[name] = row = measure_game(name, args.seconds)
        if pure:  # side by side: each game's pure run right after its compiled one
            measured = measure_pure(name, args.seconds)
            row |= {f"pure_{key}": value for key, value in measured.items()}
            row["compiled_speedup"] = row["decisions_per_s"] / measured["decisions_per_s"]
    reference = {g: measure_openspiel(g, args.seconds) for g in ("hearts", "oh_hell")}
    if all(v is not None for v in reference.values()) and not args.no_openspiel:
        out["openspiel"] = reference
        oh_hell = reference["oh_hell"]["decisions_per_s"]  # type: ignore[index]
        for name in names:
            for prefix in ("", "pure_") if pure else ("",):
                ratio = out[name][f"{prefix}decisions_per_s"] / oh_hell
                out[name][f"{prefix}ratio_to_oh_hell"] = ratio
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"engines: {out['engines']}")
    print(
        f"{'game':<14}{'matches/s':>12}{'decisions/s':>14}{'vs oh_hell':>12}"
        + (f"{'pure dec/s':>14}{'pure vs oh':>12}{'speed-up':>10}" if pure else "")
    )
    for name in names:
        row = out[name]
        ratio = f"{row['ratio_to_oh_hell']:.2f}" if "ratio_to_oh_hell" in row else "-"
        line = f"{name:<14}{row['matches_per_s']:>12.1f}{row['decisions_per_s']:>14.0f}{ratio:>12}"
        if pure:
            pure_ratio = f"{row['pure_ratio_to_oh_hell']:.2f}" if "ratio_to_oh_hell" in row else "-"
            speedup = f"{row['compiled_speedup']:.2f}x"
            line += f"{row['pure_decisions_per_s']:>14.0f}{pure_ratio:>12}{speedup:>10}"
        print(line)
    for name, ref in (out.get("openspiel") or {}).items():
        print(f"{'os:' + name:<14}{ref['matches_per_s']:>12.1f}{ref['decisions_per_s']:>14.0f}")


if __name__ == "__main__":
    main()
