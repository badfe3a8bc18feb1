"""How fast each rating finds the true order of a field of house bots of known strength.

Usage: python bench/ranking_quality.py [--games G,...] [--replications R] [--max-matches M]
       [--pool-sets N] [--noise X,...] [--no-compare] [--json]

Per game, a field of house bots (the game's rule bot playing a random legal action at rates
0, 0.25, 0.5, 1; five bots for five-seat games) plays a pool of duplicate sets in process:
every table of the field, each on its own deal, in every seating a tournament gives it (every
rotation, in both directions from three seats: tournaments.schedule.rotations), with the rule bot's
`decide` from clients/python/examples/<game>_bot.py answering the request the referee would
send. The pool is the long duplicate run that verifies the order (mean score a match, with
the adjacent gaps in standard errors, sets as the unit). Replications then draw schedules
from the pool (a bootstrap: playing real matches for every replication is too slow) and
rate them three ways:

  (a) baseline: per-match TrueSkill, tau = sigma/100, independent deals (each match from
      another set, one rotation), ordered by mu: cardshark before the rating of record;
  (b) the rating of record on duplicate sets (tournaments.ratings.apply_set), by mu;
  (c) mean score on the same duplicate sets.

Exact ties. Every method orders the bots by its value with exact ties broken at random:
each check draws a fresh random key per bot (seeded from the replication's seed), so a tie
of k bots comes out in the true order with probability 1/k!, for (a), (b) and (c) alike.
(Before, sorted() kept tied bots in the true order, so (c), whose mean scores are often
exactly tied in games with whole-point scores, won every tie, while (b)'s mu broke the same
ties by float rounding.)

It prints P(exact true order) against matches played (checked after each round of the
schedule, so the grid is one round's matches), the matches to P = 0.9 with a 90 % bootstrap
interval over replications, both as the first grid point at P >= 0.9 and interpolated
linearly between that point and the one before it (when the first grid point already
reaches 0.9 the interpolated value is that grid point), the luck a rotation set removes per
adjacent pair (variance a match of the pair's score difference, independent deals /
duplicate sets) and whether the targets hold: (b) needs at most 1.2x the matches of (c),
and at most half of (a) where (a) reaches 0.9 at all. The targets are judged on the grid
values (keys as before) and on the interpolated ones (keys ending in _interpolated).

Where P(exact order) is flat near 0.9, as for (a), the first grid point at 0.9 moves by
several grid points between sets of 200 replications (binomial standard error 0.021) and is
biased low (the first of several noisy looks); use --replications 2000 or more there
(bench/rating_efficiency.py measures that spread).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "clients/python"), str(ROOT / "clients/python/examples")]

from compare_errors import POOL_SETS as COMPARE_POOL_SETS  # noqa: E402
from compare_errors import RUNS as COMPARE_RUNS  # noqa: E402
from compare_errors import bench_compare, print_compare  # noqa: E402
from house_play import play_noisy  # noqa: E402

from games.registry import get_game  # noqa: E402
from tournaments.margins import apply_margins as apply_set  # noqa: E402
from tournaments.margins import set_scores  # noqa: E402
from tournaments.ratings import (  # noqa: E402
    Rating,
    SeatOutcome,
    TrueSkillSettings,
    apply_match,
    placements,
)
from tournaments.schedule import rotations  # noqa: E402

GAMES = ("knives", "knaves", "kill", "ninja-whist", "kansas-city")
NOISES = (0.0, 0.25, 0.5, 1.0)
NOISES_5 = (0.0, 0.25, 0.5, 0.75, 1.0)
# Duplicate sets played per game for the pool: about the same minutes per game on 2 cores.
POOL_SETS = {"knives": 400, "knaves": 1600, "kill": 400, "ninja-whist": 200, "kansas-city": 600}
TARGET = 0.9
BOOTSTRAP = 1000

# A pool set: (table of field positions, per rotation (seats as field positions, scores)).
PoolSet = tuple[tuple[int, ...], list[tuple[tuple[int, ...], tuple[float, ...]]]]


FIELDS: dict[str, tuple[float, ...]] = {}  # fields other than the default, by game
CONFIRM_Z = 3.0  # every adjacent gap at least this many standard errors, sets as the unit


def field_of(game: str) -> tuple[int, tuple[float, ...]]:
    """Seats per table and the noise of each field position (strongest first)."""
    seats = get_game(game).spec.default_seats
    noises = FIELDS.get(game) or (NOISES_5 if seats >= 5 else NOISES)
    return seats, noises


def play_set(job: tuple[str, tuple[int, ...], int]) -> PoolSet:
    """One deal at one table in every rotation, house policies answering real requests."""
    name, table, seed = job
    _, noises = field_of(name)
    played = []
    for r, seats in enumerate(rotations(table)):
        scores = play_noisy(name, seed, [noises[p] for p in seats], f"{seed}:{r}")
        played.append((seats, tuple(scores)))
    return table, played


def play_pool(game: str, sets: int, workers: int, label: str = "pool") -> list[PoolSet]:
    """`sets` duplicate sets cycling over every table of the field, seeded by `label`
    ("pool" is the bench's own pool; other labels give fresh pools of the same field)."""
    seats, noises = field_of(game)
    tables = list(itertools.combinations(range(len(noises)), seats))
    rng = random.Random(f"{label}:{game}")
    jobs = [(game, tables[i % len(tables)], rng.randrange(2**53)) for i in range(sets)]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(play_set, jobs, chunksize=1))


def verify(pool: list[PoolSet], n: int) -> dict[str, Any]:
    """Mean score a match per bot over the pool, and adjacent gaps in standard errors."""
    means = []
    for b in range(n):
        means.append(statistics.fmean(sc[s.index(b)] for _, pl in pool for s, sc in pl if b in s))
    gaps = []
    for a in range(n - 1):
        diffs = [set_difference(pl, a, a + 1) for t, pl in pool if a in t and a + 1 in t]
        se = statistics.stdev(diffs) / math.sqrt(len(diffs))
        gaps.append(
            {"pair": [a, a + 1], "gap": statistics.fmean(diffs), "z": statistics.fmean(diffs) / se}
        )
    order = sorted(range(n), key=lambda b: -means[b])
    confirmed = order == list(range(n)) and all(g["z"] >= CONFIRM_Z for g in gaps)
    return {"means": means, "adjacent": gaps, "order_confirmed": confirmed}


def set_difference(
    played: list[tuple[tuple[int, ...], tuple[float, ...]]], a: int, b: int
) -> float:
    """Mean over the set's matches of a's score minus b's."""
    return statistics.fmean(sc[s.index(a)] - sc[s.index(b)] for s, sc in played)


def luck_removed(pool: list[PoolSet], n: int) -> list[float]:
    """Per adjacent pair: variance a match of the difference, independent / duplicate."""
    out = []
    for a in range(n - 1):
        sets = [pl for t, pl in pool if a in t and a + 1 in t]
        single = [sc[s.index(a)] - sc[s.index(a + 1)] for pl in sets for s, sc in pl]
        duplicate = statistics.variance([set_difference(pl, a, a + 1) for pl in sets])
        out.append(statistics.variance(single) / (duplicate * len(sets[0])))
    return out


def replicate(
    pool: list[PoolSet], n: int, seats: int, max_matches: int, seed: int
) -> dict[str, list[tuple[int, bool]]]:
    """One replication: (matches, exact order right) at each checkpoint, per method."""
    rng = random.Random(seed)
    ties = random.Random(f"ties:{seed}")  # its own stream: the schedules stay as they were
    truth = list(range(n))
    tables = sorted({t for t, _ in pool})
    by_table = {t: [pl for u, pl in pool if u == t] for t in tables}
    settings = TrueSkillSettings()
    per_set = len(pool[0][1])  # matches a set: every seating of its table
    per_round = len(tables) * per_set

    def order(values: dict[int, float]) -> bool:
        """Exact order right, exact ties broken at random (the same for every method)."""
        key = {b: (-values.get(b, -math.inf), ties.random()) for b in truth}
        return sorted(truth, key=key.__getitem__) == truth

    out: dict[str, list[tuple[int, bool]]] = {"a": [], "b": [], "c": []}
    # (a) one random rotation of a random set per match, tables in turn: independent deals
    current: dict[int, Rating] = {}
    for m in range(max_matches):
        seated, scores = rng.choice(rng.choice(by_table[tables[m % len(tables)]]))
        ranks = placements([SeatOutcome(x) for x in scores])
        for change in apply_match(settings, current, seated, ranks):
            current[change.bot_id] = change.after
        if (m + 1) % per_round == 0:
            out["a"].append((m + 1, order({b: r.mu for b, r in current.items()})))
    # (b), (c) whole sets, tables in turn
    current = {}
    totals = [0.0] * n
    counts = [0] * n
    for i in range(max_matches // per_set):
        played = rng.choice(by_table[tables[i % len(tables)]])
        bots, scores = set_scores([(s, [SeatOutcome(x) for x in sc]) for s, sc in played])
        for change in apply_set(settings, current, bots, scores, len(played)):
            current[change.bot_id] = change.after
        for s, sc in played:
            for b, x in zip(s, sc, strict=True):
                totals[b] += x
                counts[b] += 1
        if (i + 1) % len(tables) == 0:
            matches = (i + 1) * per_set
            out["b"].append((matches, order({b: r.mu for b, r in current.items()})))
            out["c"].append((matches, order({b: totals[b] / counts[b] for b in range(n)})))
    return out


def replicate_many(
    job: tuple[list[PoolSet], int, int, int, list[int]],
) -> list[dict[str, list[tuple[int, bool]]]]:
    """Replications for a list of seeds (one worker's share)."""
    pool, n, seats, max_matches, seeds = job
    return [replicate(pool, n, seats, max_matches, seed) for seed in seeds]


def first_reaching(curve: Sequence[tuple[int, float]]) -> int | None:
    """The matches of the first checkpoint where P(exact order) reaches the target."""
    return next((m for m, p in curve if p >= TARGET), None)


def interpolated_reaching(curve: Sequence[tuple[int, float]]) -> float | None:
    """The matches where P(exact order) first reaches the target, interpolated linearly
    between the first checkpoint at or above it and the one before; the first checkpoint
    itself when that one already reaches it; None when none does."""
    for i, (m, p) in enumerate(curve):
        if p >= TARGET:
            if i == 0:
                return float(m)
            m0, p0 = curve[i - 1]
            return m0 + (m - m0) * (TARGET - p0) / (p - p0)
    return None


def summarise(runs: list[list[tuple[int, bool]]], seed: int) -> dict[str, Any]:
    """The P(order) curve and the matches to the target with a 90 % bootstrap interval."""
    checkpoints = [m for m, _ in runs[0]]

    def curve(sample: Sequence[list[tuple[int, bool]]]) -> list[tuple[int, float]]:
        return [
            (m, sum(run[i][1] for run in sample) / len(sample)) for i, m in enumerate(checkpoints)
        ]

    rng = random.Random(seed)
    boot, boot_interpolated = [], []
    for _ in range(BOOTSTRAP):
        resampled = curve(rng.choices(runs, k=len(runs)))
        boot.append(first_reaching(resampled))
        boot_interpolated.append(interpolated_reaching(resampled))
    never = max(checkpoints) + 1

    def interval(values: list[Any]) -> list[Any]:
        ordered = sorted(never if b is None else b for b in values)
        low, high = ordered[int(0.05 * BOOTSTRAP)], ordered[int(0.95 * BOOTSTRAP) - 1]
        return [None if x == never else x for x in (low, high)]

    whole = curve(runs)
    interpolated = interpolated_reaching(whole)
    return {
        "curve": whole,
        "to_target": first_reaching(whole),
        "interval": interval(boot),
        "to_target_interpolated": None if interpolated is None else round(interpolated, 1),
        "interval_interpolated": [
            None if x is None else round(x, 1) for x in interval(boot_interpolated)
        ],
    }


def bench_game(game: str, args: argparse.Namespace) -> dict[str, Any]:
    """Pool, verification, replications and targets of one game."""
    seats, noises = field_of(game)
    n = len(noises)
    started = time.perf_counter()
    sets = args.pool_sets or POOL_SETS[game]
    pool = play_pool(game, sets, args.workers)
    played = time.perf_counter() - started
    runs: dict[str, list[list[tuple[int, bool]]]] = {"a": [], "b": [], "c": []}
    chunks = [list(range(args.replications))[w :: args.workers] for w in range(args.workers)]
    with ProcessPoolExecutor(args.workers) as executor:
        jobs = [(pool, n, seats, args.max_matches, chunk) for chunk in chunks]
        for done in executor.map(replicate_many, jobs):
            for one in done:
                for method, points in one.items():
                    runs[method].append(points)
    result = {method: summarise(points, seed=7) for method, points in runs.items()}
    a, b, c = (result[m]["to_target"] for m in "abc")
    targets = {
        "b_reaches": b is not None,
        "b_within_1.2x_c": b is not None and c is not None and b <= 1.2 * c,
        "b_at_most_half_a": None if a is None else (b is not None and b <= a / 2),
    }
    a, b, c = (result[m]["to_target_interpolated"] for m in "abc")
    targets["b_within_1.2x_c_interpolated"] = b is not None and c is not None and b <= 1.2 * c
    targets["b_at_most_half_a_interpolated"] = None if a is None else (b is not None and b <= a / 2)
    return {
        "game": game,
        "seats": seats,
        "field_noise": list(noises),
        "pool": {"sets": sets, "matches": sets * len(pool[0][1]), "seconds": round(played, 1)},
        "grid_matches": len({t for t, _ in pool}) * len(pool[0][1]),
        "verify": verify(pool, n),
        "luck_removed": luck_removed(pool, n),
        "methods": result,
        "targets": targets,
    }


def print_game(out: dict[str, Any]) -> None:
    """One game's figures as text."""
    v = out["verify"]
    print(
        f"\n== {out['game']}: {len(out['field_noise'])} house bots, noise {out['field_noise']}, "
        f"{out['seats']} seats; pool {out['pool']['sets']} sets ({out['pool']['matches']} matches, "
        f"{out['pool']['seconds']} s)"
    )
    means = " > ".join(f"{x:.2f}" for x in v["means"])
    zs = ", ".join(f"{g['gap']:+.2f} (z {g['z']:.1f})" for g in v["adjacent"])
    print(
        f"order by mean score a match: {means}; adjacent gaps {zs}; "
        f"{'confirmed' if v['order_confirmed'] else 'NOT confirmed'}"
    )
    print(
        "luck a set removes per adjacent pair (variance independent/duplicate): "
        + ", ".join(f"x{x:.2f}" for x in out["luck_removed"])
    )
    names = {
        "a": "(a) TrueSkill per match, tau=sigma/100, independent",
        "b": "(b) rating of record, duplicate sets",
        "c": "(c) mean score, duplicate sets",
    }
    curves = {m: dict(out["methods"][m]["curve"]) for m in "abc"}
    shown = sorted(set(curves["b"]) & set(curves["a"]))
    step = max(1, len(shown) // 8)
    print("matches   " + "  ".join(f"{m:>5}" for m in shown[::step]))
    for m in "abc":
        print(f"P {m}       " + "  ".join(f"{curves[m][x]:5.2f}" for x in shown[::step]))
    for m in "abc":
        r = out["methods"][m]
        lo, hi = r["interval"]
        ilo, ihi = r["interval_interpolated"]
        print(
            f"{names[m]}: P=0.9 at {r['to_target'] or 'never'} matches "
            f"(90% {lo or 'never'}-{hi or 'never'}); interpolated "
            f"{r['to_target_interpolated'] or 'never'} (90% {ilo or 'never'}-{ihi or 'never'})"
        )
    print(f"targets: {out['targets']}")


def main() -> None:
    """Run the bench for the chosen games and print a table, or JSON with --json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--replications", type=int, default=200, help="seeded schedules per method")
    parser.add_argument("--max-matches", type=int, default=600, help="longest schedule rated")
    parser.add_argument(
        "--pool-sets", type=int, default=0, help="duplicate sets in the pool (default per game)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes playing the pool")
    parser.add_argument(
        "--noise", default="", help="field noises strongest first, e.g. 0,0.5,0.75,1"
    )
    parser.add_argument(
        "--no-compare", action="store_true", help="skip the compare bench (no 'compare' key)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.noise:
        noises = tuple(float(x) for x in args.noise.split(","))
        FIELDS.update({g: noises for g in GAMES})
    results = []
    for game in args.games.split(","):
        out = bench_game(game, args)
        if not args.no_compare:
            out["compare"] = bench_compare(game, COMPARE_POOL_SETS, COMPARE_RUNS, args.workers)
        results.append(out)
        if not args.json:
            print_game(out)
            if not args.no_compare:
                print_compare(out["compare"])
            sys.stdout.flush()
    if args.json:
        print(
            json.dumps(
                {
                    "replications": args.replications,
                    "max_matches": args.max_matches,
                    "tie_break": "random",
                    "games": results,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
