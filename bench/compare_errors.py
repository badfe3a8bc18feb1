"""`cardshark compare`'s error rates and matches to a verdict, measured in process.

Usage: python bench/compare_errors.py [--games G,...] [--pool-sets N] [--runs R] [--json]
(also run by bench/ranking_quality.py for every game it benches).

Per game, two pairs of house bots play pools of compare's sets (one deal in every seating of
server.play.compare_sets.set_seats, the other seats random bots, as `--field house:G:noise=1`),
answered by the game's rule bot in process like bench/ranking_quality.py:

  twins: NEW and BASE both noise 0.5. Their true difference is 0 by symmetry, so the pool's
         per-set differences and their negations are the null distribution; the share of
         "better" verdicts over seeded runs drawn from it is the observed alpha.
  near, clear: NEW the rule bot, BASE its noise-0.25 or noise-0.5 copy. The pool's mean is
         the true lead; where it is at least H1, the share of "not better" verdicts is the
         observed beta.

Each run is compare's own test (tournaments.sequential.sprt, compare's default H0, H1,
alpha, beta and max sets) on a sequence resampled from the pool: playing thousands of real
runs is too slow. It prints, per pair, the verdict shares, the mean matches to a verdict and
the pool's mean difference.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "clients/python"), str(ROOT / "clients/python/examples")]

from house_play import play_noisy  # noqa: E402

from games.registry import get_game  # noqa: E402
from server.play.compare_sets import DEFAULT_H1, DEFAULT_MAX_SETS, set_difference, set_seats  # noqa: E402
from tournaments.sequential import BETTER, NOT_BETTER, SprtSettings, sprt  # noqa: E402

GAMES = ("knives", "knaves", "kill", "ninja-whist", "kansas-city")
PAIRS = {"twins": (0.5, 0.5), "near": (0.0, 0.25), "clear": (0.0, 0.5)}
FIELD_NOISE = 1.0
POOL_SETS = 300
RUNS = 2000


def play_compare_set(job: tuple[str, float, float, int]) -> float:
    """One compare set of NEW (noise a) against BASE (noise b), random bots elsewhere."""
    name, new_noise, base_noise, seed = job
    seats = get_game(name).spec.default_seats
    noise = [new_noise, base_noise] + [FIELD_NOISE] * (seats - 2)
    seatings = set_seats(seats)
    scores = []
    for r, seating in enumerate(seatings):
        played = play_noisy(name, seed, [noise[role] for role in seating], f"{seed}:{r}")
        scores.append([int(x) for x in played])
    return set_difference(seatings, scores)


def verdicts(pool: list[float], runs: int, seed: int, per_set: int) -> dict[str, Any]:
    """Compare's test on `runs` sequences resampled from pool: verdict shares and cost."""
    settings = SprtSettings(0.0, DEFAULT_H1)
    rng = random.Random(seed)
    counts = {BETTER: 0, NOT_BETTER: 0, "undecided": 0}
    decided_sets = []
    for _ in range(runs):
        result = sprt(
            (rng.choice(pool) for _ in range(DEFAULT_MAX_SETS)), settings, DEFAULT_MAX_SETS
        )
        counts[result.verdict] += 1
        if result.verdict != "undecided" and result.last is not None:
            decided_sets.append(result.last.sets)
    return {
        "shares": {k: v / runs for k, v in counts.items()},
        "mean_matches_to_verdict": (
            statistics.fmean(decided_sets) * per_set if decided_sets else None
        ),
    }


def bench_compare(game: str, pool_sets: int, runs: int, workers: int) -> dict[str, Any]:
    """Both pairs of one game: pool mean and sd, verdict shares, matches to a verdict."""
    per_set = len(set_seats(get_game(game).spec.default_seats))
    out: dict[str, Any] = {"game": game, "h1": DEFAULT_H1, "matches_per_set": per_set}
    rng = random.Random(f"compare:{game}")
    with ProcessPoolExecutor(workers) as executor:
        for label, (a, b) in PAIRS.items():
            jobs = [(game, a, b, rng.randrange(2**53)) for _ in range(pool_sets)]
            pool = list(executor.map(play_compare_set, jobs, chunksize=4))
            mean, sd = statistics.fmean(pool), statistics.stdev(pool)
            drawn = pool + [-x for x in pool] if label == "twins" else pool
            result = verdicts(drawn, runs, seed=11, per_set=per_set)
            out[label] = {"noise": [a, b], "pool_mean": mean, "pool_sd": sd, **result}
    out["observed_alpha"] = out["twins"]["shares"][BETTER]
    # beta is promised only where the true lead reaches H1
    out["observed_beta"] = {
        label: out[label]["shares"][NOT_BETTER]
        for label in ("near", "clear")
        if out[label]["pool_mean"] >= DEFAULT_H1
    }
    return out


def print_compare(out: dict[str, Any]) -> None:
    """One game's compare figures as text."""
    print(
        f"compare ({out['game']}, sets of {out['matches_per_set']} matches, H1 {out['h1']:g}, "
        f"alpha = beta = 0.05, random field):"
    )
    for label in PAIRS:
        r = out[label]
        shares = ", ".join(f"{k} {v:.3f}" for k, v in r["shares"].items())
        cost = r["mean_matches_to_verdict"]
        print(
            f"  {label} (noise {r['noise'][0]:g} vs {r['noise'][1]:g}): true lead "
            f"{r['pool_mean']:+.2f} (set sd {r['pool_sd']:.2f}); {shares}; "
            f"{'no verdict' if cost is None else f'{cost:.0f} matches to a verdict'}"
        )
    betas = ", ".join(f"{k} {v:.3f}" for k, v in out["observed_beta"].items()) or "n/a"
    print(
        f"  observed alpha {out['observed_alpha']:.3f} (twins); observed beta {betas} "
        "(pairs whose lead reaches H1)"
    )


def main() -> None:
    """Run the compare bench for the chosen games."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--pool-sets", type=int, default=POOL_SETS, help="sets per pool")
    parser.add_argument("--runs", type=int, default=RUNS, help="resampled runs per pair")
    parser.add_argument("--workers", type=int, default=2, help="processes playing the pools")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = []
    for game in args.games.split(","):
        out = bench_compare(game, args.pool_sets, args.runs, args.workers)
        results.append(out)
        if not args.json:
            print_compare(out)
            sys.stdout.flush()
    if args.json:
        print(json.dumps({"games": results}, indent=1))


if __name__ == "__main__":
    main()
