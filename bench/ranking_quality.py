"""How fast each rating finds the true order of a field of house bots of known strength.

Usage: python bench/ranking_quality.py [--games G,...] [--replications R] [--max-matches M]
       [--pool-sets N] [--noise X,...] [--ts-beta B] [--ts-draw-probability P]
       [--no-compare] [--json]

Per game, a field of house bots (the game's rule bot playing a random legal action at rates
0, 0.25, 0.5, 1; five bots for five-seat games) plays a pool of duplicate sets in process:
every table of the field, each on its own deal, in every seating a tournament gives it (every
rotation, in both directions from three seats: tournaments.schedule.rotations), with the rule bot's
`decide` from clients/python/examples/<game>_bot.py answering the request the referee would
send. The pool is the long duplicate run that verifies the order (mean score a match, with
the adjacent gaps in standard errors, sets as the unit). Replications then draw schedules
from the pool (a bootstrap: playing real matches for every replication is too slow) and
rate them four ways:

  (a) the old way, kept as a baseline: per-match TrueSkill with drift, tau = sigma/100 added
      before every match (an environment of the bench's own: tournaments.ratings rates with
      tau = 0 now), independent deals (each match from another set, one rotation), by mu;
  (b) the margin model (tournaments.margins.apply_margins, the rating of record before
      TrueSkill, now the baseline) on duplicate sets, one update a set on the set's mean
      scores, by mu;
  (c) mean score on the same duplicate sets;
  (d) TrueSkill (rating of record): tournaments.ratings.apply_set on the same duplicate
      sets, each match of the set one free-for-all with its stored ranks (placements of the
      scores), in rotation order, tau = 0, one environment for the whole schedule (one
      tournament); ordered by mu (key "d") and, as the leaderboard sorts, by mu - 3 sigma
      (key "d_conservative"; the same ratings, checked with their own tie stream).
      Its beta and draw probability are the rating of record's defaults
      (tournaments.ratings.TrueSkillSettings), or --ts-beta and --ts-draw-probability:
      a tournament stores both, so any value is one a tournament can be rated with.

(a) and (b) are rated with BASELINE, the settings they were always measured with (beta
25/6, draw probability 0.10, the `trueskill` package's defaults), whatever the rating of
record's defaults or the options for (d) are: the margin model's beta scales its updates,
so the baseline stays one fixed yardstick.

TrueSkill per match with tau = 0 on duplicate deals, each match rated as soon as it is
played, is (d) itself here: apply_set rates the set's matches one by one with the same
rate_match in the same order, the bench draws whole sets and checks the order only between
rounds of sets, so rating each match on arrival (apply_match) gives bit-for-bit the same
ratings at every checkpoint. It is not a method of its own.

The schedules of (b), (c) and (d) are the same sets (paired); (a) draws its own matches.
(a), (b) and (c) are unchanged from before the TrueSkill rating of record, with the same
schedules and tie draws (the old per-match env is rebuilt here), so their figures compare.

Exact ties. Every method orders the bots by its value with exact ties broken at random:
each check draws a fresh random key per bot (seeded from the replication's seed), so a tie
of k bots comes out in the true order with probability 1/k!, for (a), (b) and (c) alike.
(Before, sorted() kept tied bots in the true order, so (c), whose mean scores are often
exactly tied in games with whole-point scores, won every tie, while (b)'s mu broke the same
ties by float rounding.) (d) and d_conservative draw their keys from streams of their own, so
adding them left the draws of (a), (b) and (c) as they were.

The pool's tie rate is printed beside the order: the share of pairs of seats of one match that
ended on equal scores (so share a rank), the draws TrueSkill's draw probability models.

It prints P(exact true order) against matches played (checked after each round of the
schedule, so the grid is one round's matches), the matches to P = 0.9 with a 90 % bootstrap
interval over replications, both as the first grid point at P >= 0.9 and interpolated
linearly between that point and the one before it (when the first grid point already
reaches 0.9 the interpolated value is that grid point), the luck a rotation set removes per
adjacent pair (variance a match of the pair's score difference, independent deals /
duplicate sets), the ratios TrueSkill / margin model ((d) / (b), with a paired 90 %
bootstrap interval) and whether the targets hold (issue 29): the TrueSkill rating of record
(d) reaches P = 0.9 in every game's field with at most 1.7x the matches of the margin model
(b), and at most 1.4x in Knaves. They are judged on the grid values and on the interpolated
ones (keys ending in _interpolated); "targets_hold" is the judgement on the interpolated
ones, the grid being one round of sets wide (8 to 24 matches in the default fields, a large
share of the margin model's figure where that is small). The old targets ((b) within 1.2x
of (c), at most half of (a)) are still computed and printed under "old_targets", no longer
judged.

Where P(exact order) is flat near 0.9, as for (a), the first grid point at 0.9 moves by
several grid points between sets of 200 replications (binomial standard error 0.021) and is
biased low (the first of several noisy looks); use --replications 2000 or more there
(bench/rating_efficiency.py measures that spread).
"""

from __future__ import annotations

import argparse
import functools
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

import trueskill  # noqa: E402
from compare_errors import POOL_SETS as COMPARE_POOL_SETS  # noqa: E402
from compare_errors import RUNS as COMPARE_RUNS  # noqa: E402
from compare_errors import bench_compare, print_compare  # noqa: E402
from house_play import play_noisy  # noqa: E402

from games.registry import get_game  # noqa: E402
from tournaments.margins import apply_margins, set_scores  # noqa: E402
from tournaments.ratings import (  # noqa: E402
    DEFAULT_BETA,
    DEFAULT_DRAW_PROBABILITY,
    Rating,
    SeatOutcome,
    TrueSkillSettings,
    apply_set,
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
# Methods a replication rates, and their labels.
METHODS = ("a", "b", "c", "d", "d_conservative")
OLD_METHODS = ("a", "b", "c")  # bench/rating_efficiency.py's baseline asks for these only
NAMES = {
    "a": "(a) old per-match TrueSkill, tau=sigma/100, independent deals",
    "b": "(b) margin model, duplicate sets",
    "c": "(c) mean score, duplicate sets",
    "d": "(d) TrueSkill (rating of record), duplicate sets, by mu",
    "d_conservative": "(d) TrueSkill (rating of record), duplicate sets, by mu-3sigma",
}
# Targets (issue 29): TrueSkill of record to P = 0.9 within this many times the margin model.
RATIO_LIMIT = 1.7
RATIO_LIMITS = {"knaves": 1.4}
# The settings (a) and (b) are rated with: the `trueskill` package's defaults, fixed here so
# that their figures compare across changes of the rating of record's defaults.
BASELINE = TrueSkillSettings(
    mu=25.0, sigma=25.0 / 3, beta=25.0 / 3 / 2, tau=25.0 / 3 / 100, draw_probability=0.10
)

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
    gaps: list[dict[str, Any]] = []
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


def tie_rate(pool: list[PoolSet]) -> float:
    """The share of pairs of seats of one match that ended on equal scores, over the pool."""
    tied = pairs = 0
    for _, played in pool:
        for _, scores in played:
            for x, y in itertools.combinations(scores, 2):
                tied += x == y
                pairs += 1
    return tied / pairs


def luck_removed(pool: list[PoolSet], n: int) -> list[float]:
    """Per adjacent pair: variance a match of the difference, independent / duplicate."""
    out = []
    for a in range(n - 1):
        sets = [pl for t, pl in pool if a in t and a + 1 in t]
        single = [sc[s.index(a)] - sc[s.index(a + 1)] for pl in sets for s, sc in pl]
        duplicate = statistics.variance([set_difference(pl, a, a + 1) for pl in sets])
        out.append(statistics.variance(single) / (duplicate * len(sets[0])))
    return out


def old_rate_match(
    settings: TrueSkillSettings, before: Sequence[Rating], ranks: Sequence[int]
) -> list[Rating]:
    """Per-match TrueSkill as cardshark rated before the rating of record: tau added to
    sigma before every match (the package's own drift), in an environment of its own."""
    env = _old_environment(settings)
    groups = [(env.create_rating(r.mu, r.sigma),) for r in before]
    rated = env.rate(groups, ranks=list(ranks))
    return [Rating(float(g[0].mu), float(g[0].sigma)) for g in rated]


@functools.lru_cache(maxsize=8)
def _old_environment(settings: TrueSkillSettings) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(
        mu=settings.mu,
        sigma=settings.sigma,
        beta=settings.beta,
        tau=settings.tau,  # sigma/100 by default, added before every match
        draw_probability=settings.draw_probability,
        backend=None,
    )


def replicate(
    pool: list[PoolSet],
    n: int,
    seats: int,
    max_matches: int,
    seed: int,
    methods: Sequence[str] = METHODS,
    of_record: TrueSkillSettings | None = None,
) -> dict[str, list[tuple[int, bool]]]:
    """One replication: (matches, exact order right) at each checkpoint, per method.

    The methods left out of `methods` are not rated; the others come out the same either way.
    (d) is rated with `of_record` (default: the rating of record's default settings), (a) and
    (b) with BASELINE.
    """
    rng = random.Random(seed)
    ties = random.Random(f"ties:{seed}")  # its own stream: the schedules stay as they were
    # (d)'s own tie streams, so that adding it left the draws of (a), (b), (c) as they were
    ties_d = {m: random.Random(f"ties:{m}:{seed}") for m in ("d", "d_conservative")}
    truth = list(range(n))
    tables = sorted({t for t, _ in pool})
    by_table = {t: [pl for u, pl in pool if u == t] for t in tables}
    settings = BASELINE
    record = TrueSkillSettings() if of_record is None else of_record
    per_set = len(pool[0][1])  # matches a set: every seating of its table
    per_round = len(tables) * per_set

    def order(values: dict[int, float], stream: random.Random = ties) -> bool:
        """Exact order right, exact ties broken at random (the same for every method)."""
        key = {b: (-values.get(b, -math.inf), stream.random()) for b in truth}
        return sorted(truth, key=key.__getitem__) == truth

    out: dict[str, list[tuple[int, bool]]] = {m: [] for m in methods}
    # (a) one random rotation of a random set per match, tables in turn: independent deals.
    # Its draws are made even when (a) is left out, so the schedules of the others stay.
    current: dict[int, Rating] = {}
    for m in range(max_matches):
        seated, scores = rng.choice(rng.choice(by_table[tables[m % len(tables)]]))
        if "a" not in methods:
            continue
        ranks = placements([SeatOutcome(x) for x in scores])
        before = [current.get(b, settings.initial()) for b in seated]
        current.update(zip(seated, old_rate_match(settings, before, ranks), strict=True))
        if (m + 1) % per_round == 0:
            out["a"].append((m + 1, order({b: r.mu for b, r in current.items()})))
    # (b), (c), (d) the same whole sets, tables in turn
    current = {}
    rated: dict[int, Rating] = {}
    totals = [0.0] * n
    counts = [0] * n
    for i in range(max_matches // per_set):
        played = rng.choice(by_table[tables[i % len(tables)]])
        bots, set_means = set_scores([(s, [SeatOutcome(x) for x in sc]) for s, sc in played])
        for change in apply_margins(settings, current, bots, set_means, len(played)):
            current[change.bot_id] = change.after
        if "d" in methods or "d_conservative" in methods:
            matches_of_set = [(s, placements([SeatOutcome(x) for x in sc])) for s, sc in played]
            for change in apply_set(record, rated, matches_of_set):
                rated[change.bot_id] = change.after
        for s, sc in played:
            for b, x in zip(s, sc, strict=True):
                totals[b] += x
                counts[b] += 1
        if (i + 1) % len(tables) == 0:
            matches = (i + 1) * per_set
            if "b" in methods:
                out["b"].append((matches, order({b: r.mu for b, r in current.items()})))
            if "c" in methods:
                out["c"].append((matches, order({b: totals[b] / counts[b] for b in range(n)})))
            if "d" in methods:
                mus = {b: r.mu for b, r in rated.items()}
                out["d"].append((matches, order(mus, ties_d["d"])))
            if "d_conservative" in methods:
                low = {b: r.conservative for b, r in rated.items()}
                out["d_conservative"].append((matches, order(low, ties_d["d_conservative"])))
    return out


def replicate_many(
    job: tuple[list[PoolSet], int, int, int, list[int]]
    | tuple[list[PoolSet], int, int, int, list[int], Sequence[str]]
    | tuple[list[PoolSet], int, int, int, list[int], Sequence[str], TrueSkillSettings],
) -> list[dict[str, list[tuple[int, bool]]]]:
    """Replications for a list of seeds (one worker's share); the methods are the job's
    sixth item, (a), (b), (c) without one (what bench/rating_efficiency.py asks for), and
    (d)'s settings its seventh, the rating of record's defaults without one."""
    pool, n, seats, max_matches, seeds = job[:5]
    methods = job[5] if len(job) > 5 else OLD_METHODS
    of_record = job[6] if len(job) > 6 else None
    return [replicate(pool, n, seats, max_matches, seed, methods, of_record) for seed in seeds]


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


def ratio(
    numerator: list[list[tuple[int, bool]]], denominator: list[list[tuple[int, bool]]], seed: int
) -> dict[str, Any]:
    """Matches to the target of one method over another's, grid and interpolated, with a
    paired 90 % bootstrap interval (the same replications resampled for both)."""
    checkpoints = {"n": [m for m, _ in numerator[0]], "d": [m for m, _ in denominator[0]]}
    count = len(numerator)

    def curve(runs: list[list[tuple[int, bool]]], idx: list[int], which: str) -> Any:
        return [
            (m, sum(runs[i][j][1] for i in idx) / len(idx))
            for j, m in enumerate(checkpoints[which])
        ]

    def both(idx: list[int]) -> dict[str, float | None]:
        num, den = curve(numerator, idx, "n"), curve(denominator, idx, "d")
        out: dict[str, float | None] = {}
        for key, reach in (("grid", first_reaching), ("interpolated", interpolated_reaching)):
            x, y = reach(num), reach(den)
            out[key] = None if x is None or y is None else x / y
        return out

    whole = both(list(range(count)))
    rng = random.Random(seed)
    boot = [both(rng.choices(range(count), k=count)) for _ in range(BOOTSTRAP)]
    result: dict[str, Any] = {}
    for key in ("grid", "interpolated"):
        values = sorted(math.inf if (x := b[key]) is None else x for b in boot)
        low, high = values[int(0.05 * BOOTSTRAP)], values[int(0.95 * BOOTSTRAP) - 1]
        point = whole[key]
        result[key] = None if point is None else round(point, 3)
        result[f"interval_{key}"] = [None if math.isinf(x) else round(x, 3) for x in (low, high)]
    return result


def of_record(args: argparse.Namespace) -> TrueSkillSettings:
    """(d)'s settings: the rating of record's defaults, with --ts-beta and
    --ts-draw-probability when given."""
    return TrueSkillSettings(beta=args.ts_beta, draw_probability=args.ts_draw_probability)


def bench_game(game: str, args: argparse.Namespace) -> dict[str, Any]:
    """Pool, verification, replications and targets of one game."""
    seats, noises = field_of(game)
    n = len(noises)
    started = time.perf_counter()
    sets = args.pool_sets or POOL_SETS[game]
    pool = play_pool(game, sets, args.workers)
    played = time.perf_counter() - started
    runs: dict[str, list[list[tuple[int, bool]]]] = {m: [] for m in METHODS}
    chunks = [list(range(args.replications))[w :: args.workers] for w in range(args.workers)]
    record = of_record(args)
    with ProcessPoolExecutor(args.workers) as executor:
        jobs = [(pool, n, seats, args.max_matches, chunk, METHODS, record) for chunk in chunks]
        for done in executor.map(replicate_many, jobs):
            for one in done:
                for method, points in one.items():
                    runs[method].append(points)
    result = {method: summarise(points, seed=7) for method, points in runs.items()}
    ratios = {
        "d/b": ratio(runs["d"], runs["b"], seed=7),
        "d_conservative/b": ratio(runs["d_conservative"], runs["b"], seed=7),
    }
    limit = RATIO_LIMITS.get(game, RATIO_LIMIT)
    within = f"d_within_{limit}x_b"
    old: dict[str, bool | None] = {}
    targets: dict[str, bool | None] = {}
    for suffix, key in (("", "to_target"), ("_interpolated", "to_target_interpolated")):
        a, b, c, d = (result[m][key] for m in ("a", "b", "c", "d"))
        targets["d_reaches" + suffix] = d is not None
        targets[within + suffix] = d is not None and b is not None and d <= limit * b
        old["b_reaches" + suffix] = b is not None
        old["b_within_1.2x_c" + suffix] = b is not None and c is not None and b <= 1.2 * c
        old["b_at_most_half_a" + suffix] = None if a is None else (b is not None and b <= a / 2)
    return {
        "game": game,
        "seats": seats,
        "field_noise": list(noises),
        "pool": {"sets": sets, "matches": sets * len(pool[0][1]), "seconds": round(played, 1)},
        "grid_matches": len({t for t, _ in pool}) * len(pool[0][1]),
        "of_record": {"beta": record.beta, "draw_probability": record.draw_probability},
        "verify": verify(pool, n),
        "tie_rate": tie_rate(pool),
        "luck_removed": luck_removed(pool, n),
        "methods": result,
        "ratios": ratios,
        "ratio_limit": limit,
        "targets": targets,
        "targets_hold": bool(
            targets["d_reaches_interpolated"] and targets[within + "_interpolated"]
        ),
        "old_targets": old,
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
        f"{'confirmed' if v['order_confirmed'] else 'NOT confirmed'}; "
        f"tied pairs of seats {out['tie_rate']:.3f}"
    )
    record = out["of_record"]
    print(
        f"(d) TrueSkill beta {record['beta']:.4g}, "
        f"draw probability {record['draw_probability']:.4g}"
    )
    print(
        "luck a set removes per adjacent pair (variance independent/duplicate): "
        + ", ".join(f"x{x:.2f}" for x in out["luck_removed"])
    )
    curves = {m: dict(out["methods"][m]["curve"]) for m in METHODS}
    shown = sorted(set(curves["b"]) & set(curves["a"]))
    step = max(1, len(shown) // 8)
    print("matches              " + "  ".join(f"{m:>5}" for m in shown[::step]))
    for m in METHODS:
        print(f"P {m:<18} " + "  ".join(f"{curves[m][x]:5.2f}" for x in shown[::step]))
    for m in METHODS:
        r = out["methods"][m]
        lo, hi = r["interval"]
        ilo, ihi = r["interval_interpolated"]
        print(
            f"{NAMES[m]}: P=0.9 at {r['to_target'] or 'never'} matches "
            f"(90% {lo or 'never'}-{hi or 'never'}); interpolated "
            f"{r['to_target_interpolated'] or 'never'} (90% {ilo or 'never'}-{ihi or 'never'})"
        )
    for key, r in out["ratios"].items():
        print(
            f"ratio {key} (TrueSkill / margin model): interpolated {r['interpolated']} "
            f"(90% {r['interval_interpolated']}); grid {r['grid']} (90% {r['interval_grid']})"
        )
    verdict = "hold" if out["targets_hold"] else "DO NOT hold"
    print(f"targets (TrueSkill within {out['ratio_limit']}x the margin model): {verdict}")
    print(f"  {out['targets']}")
    print(f"old targets (not judged): {out['old_targets']}")


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
        "--ts-beta",
        type=float,
        default=DEFAULT_BETA,
        help=f"beta of the TrueSkill rating of record (d) (default {DEFAULT_BETA:.4g})",
    )
    parser.add_argument(
        "--ts-draw-probability",
        type=float,
        default=DEFAULT_DRAW_PROBABILITY,
        help="draw probability of the TrueSkill rating of record (d) "
        f"(default {DEFAULT_DRAW_PROBABILITY:.4g})",
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
    if not args.json:
        held = all(r["targets_hold"] for r in results)
        print(f"\ntargets hold in every game: {'yes' if held else 'NO'}")
    if args.json:
        print(
            json.dumps(
                {
                    "replications": args.replications,
                    "max_matches": args.max_matches,
                    "tie_break": "random",
                    "of_record": {
                        "beta": args.ts_beta,
                        "draw_probability": args.ts_draw_probability,
                    },
                    "targets_hold": all(r["targets_hold"] for r in results),
                    "games": results,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
