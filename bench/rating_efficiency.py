"""How much ordering information each statistic of the duplicate sets carries, and what
ranking_quality's baseline (a) really needs, measured with many replications (issue 21).

Usage: python bench/rating_efficiency.py [--game G] [--noise X,...] [--pool-sets N]
       [--pool-seed LABEL] [--replications R] [--max-sets S] [--mix L,...] [--clip C,...]
       [--baseline-replications R] [--max-matches M] [--subsets K] [--bench-replications B]
       [--cache DIR] [--workers W] [--json]

It plays (or loads from --cache) a pool of duplicate sets exactly as bench/ranking_quality.py
does (`--pool-seed pool`, the default, is that bench's own pool; any other label gives a fresh
pool of the same field), then reports three things.

1. Moments. Skewness and excess kurtosis of each bot's set score and of each adjacent pair's
   set difference: near 0 means the sets are close to Gaussian draws, and then the set mean
   is a sufficient statistic for the bots' means, whatever their covariance.

2. Efficiency. For each statistic of a match's final scores, summed over a set's matches,
   the per-set efficiency of each adjacent pair's difference, mean^2 / variance: the sets
   needed to separate the pair scale as its inverse, so the ratio of two efficiencies is
   the ratio of sets they need. Then --replications schedules of whole sets (drawn with
   replacement from the pool, tables in turn, as ranking_quality does; the same schedules
   for every statistic) ordered by the statistic's sums: P(exact true order) after each
   round, exact ties broken at random (a tie of k bots right with probability 1/k!, as the
   bench now does), and the matches to P = 0.9 on the grid and interpolated. Statistics:
     score      the final score (what (c) sums; in a one-table field (b) orders the same)
     rank       opponents outscored in the match, +0.5 a tie (Borda)
     z          (score - match mean) / match standard deviation
     score+L    score + L * s * rank, s the score's standard deviation over the rank's
                (ranks in score units), for each L of --mix
     winsorC    score minus the match mean, clipped at +-C, for each C of --clip
   With every bot at every table (one-table fields), any rating that adds a per-set value
   per bot orders exactly like these sums.

3. Baseline. ranking_quality.replicate unchanged (methods (a), (b), (c), its schedules and
   tie handling) with --baseline-replications replications: each method's P(exact order)
   with its binomial standard error, the matches to 0.9 (grid and interpolated, 90 %
   bootstrap interval), the ratios b/a and c/a, and, over --subsets random subsets of
   --bench-replications replications (the bench's default 200), how often the bench would
   report each grid value for (a) and (b) and how often it would find b <= a/2.

All draws are seeded. Text by default; --json prints one JSON object instead.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import pickle
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench")]

import ranking_quality as rq  # noqa: E402

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "cardshark-rating-efficiency"

Statistic = Callable[[Sequence[float]], list[float]]
SetValues = list[tuple[tuple[int, ...], list[float]]]


def load_pool(
    game: str, sets: int, label: str, workers: int, cache: Path | None
) -> list[rq.PoolSet]:
    """ranking_quality's pool of `sets` duplicate sets seeded by `label`, cached as a pickle."""
    _, noises = rq.field_of(game)
    key = None
    if cache is not None:
        key = cache / f"{game}-{'_'.join(map(str, noises))}-{sets}-{label}.pickle"
        if key.exists():
            return pickle.loads(key.read_bytes())
    pool = rq.play_pool(game, sets, workers, label)
    if key is not None:
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(pickle.dumps(pool))
    return pool


def moments(values: Sequence[float]) -> dict[str, float]:
    """Mean, standard deviation, skewness and excess kurtosis."""
    m = statistics.fmean(values)
    s = statistics.pstdev(values)
    skew = statistics.fmean(((x - m) / s) ** 3 for x in values)
    kurt = statistics.fmean(((x - m) / s) ** 4 for x in values) - 3
    return {"mean": m, "sd": s, "skew": skew, "excess_kurtosis": kurt}


def pool_moments(pool: list[rq.PoolSet], n: int) -> dict[str, list[dict[str, float]]]:
    """Moments of each bot's set score and of each adjacent pair's set difference."""
    bots = []
    for b in range(n):
        bots.append(
            moments([statistics.fmean(sc[s.index(b)] for s, sc in pl) for t, pl in pool if b in t])
        )
    pairs = []
    for a in range(n - 1):
        pairs.append(
            moments([rq.set_difference(pl, a, a + 1) for t, pl in pool if a in t and a + 1 in t])
        )
    return {"bots": bots, "adjacent": pairs}


def rank(sc: Sequence[float]) -> list[float]:
    """Opponents outscored, a tie counting half."""
    return [sum(1.0 if x > y else 0.5 if x == y else 0.0 for y in sc) - 0.5 for x in sc]


def margin(sc: Sequence[float]) -> list[float]:
    m = statistics.fmean(sc)
    return [x - m for x in sc]


def zscore(sc: Sequence[float]) -> list[float]:
    m = statistics.fmean(sc)
    s = statistics.pstdev(sc)
    return [0.0 if s == 0 else (x - m) / s for x in sc]


def mixed(lam: float, scale: float) -> Statistic:
    return lambda sc: [x + lam * scale * r for x, r in zip(sc, rank(sc), strict=True)]


def winsorized(clip: float) -> Statistic:
    return lambda sc: [max(-clip, min(clip, x)) for x in margin(sc)]


def statistics_of(
    pool: list[rq.PoolSet], mixes: Sequence[float], clips: Sequence[float]
) -> dict[str, Statistic]:
    """The statistics compared, by name."""
    scores = [x for _, pl in pool for _, sc in pl for x in sc]
    seats = len(pool[0][1][0][1])
    scale = statistics.pstdev(scores) / statistics.pstdev(rank(list(range(seats))))
    out: dict[str, Statistic] = {"score": list, "rank": rank, "z": zscore}
    out.update({f"score+{lam:g}": mixed(lam, scale) for lam in mixes})
    out.update({f"winsor{c:g}": winsorized(c) for c in clips})
    return out


def set_values(pool: list[rq.PoolSet], n: int, f: Statistic) -> SetValues:
    """Per set: its table and each field position's statistic summed over the set."""
    out = []
    for table, played in pool:
        v = [0.0] * n
        for seats, sc in played:
            for b, x in zip(seats, f(sc), strict=True):
                v[b] += x
        out.append((table, v))
    return out


def efficiency(values: SetValues, n: int) -> list[float]:
    """Per adjacent pair: mean^2 / variance of the per-set difference."""
    out = []
    for a in range(n - 1):
        d = [v[a] - v[a + 1] for t, v in values if a in t and a + 1 in t]
        out.append(statistics.fmean(d) ** 2 / statistics.variance(d))
    return out


def p_order(v: Sequence[float], n: int) -> float:
    """P(exact true order 0..n-1) when ordering by v with exact ties broken at random."""
    if any(v[i] < v[i + 1] for i in range(n - 1)):
        return 0.0
    p, i = 1.0, 0
    while i < n:
        j = i
        while j + 1 < n and v[j + 1] == v[i]:
            j += 1
        p /= math.factorial(j - i + 1)
        i = j + 1
    return p


def simulate(job: tuple[SetValues, int, int, list[int]]) -> list[float]:
    """Summed P(exact order) after each round over the seeds' schedules of whole sets."""
    values, n, rounds, seeds = job
    tables = sorted({t for t, _ in values})
    by_table = {t: [v for u, v in values if u == t] for t in tables}
    acc = [0.0] * rounds
    for seed in seeds:
        rng = random.Random(seed)
        total = [0.0] * n
        for r in range(rounds):
            for t in tables:
                v = rng.choice(by_table[t])
                for b in range(n):
                    total[b] += v[b]
            acc[r] += p_order(total, n)
    return acc


def study(
    pool: list[rq.PoolSet], n: int, stats: dict[str, Statistic], args: argparse.Namespace
) -> dict[str, Any]:
    """Efficiency and matches to 0.9 of every statistic, on common schedules."""
    tables = sorted({t for t, _ in pool})
    per_round = len(tables) * len(pool[0][1])
    rounds = max(1, args.max_sets // len(tables))
    seeds = list(range(args.replications))
    out = {}
    for name, f in stats.items():
        values = set_values(pool, n, f)
        jobs = [(values, n, rounds, seeds[w :: args.workers]) for w in range(args.workers)]
        with ProcessPoolExecutor(args.workers) as executor:
            parts = list(executor.map(simulate, jobs))
        curve = [
            ((r + 1) * per_round, sum(p[r] for p in parts) / args.replications)
            for r in range(rounds)
        ]
        interpolated = rq.interpolated_reaching(curve)
        out[name] = {
            "efficiency": efficiency(values, n),
            "curve": curve,
            "to_target": rq.first_reaching(curve),
            "to_target_interpolated": None if interpolated is None else round(interpolated, 1),
        }
    return out


def baseline(pool: list[rq.PoolSet], n: int, seats: int, args: argparse.Namespace) -> Any:
    """ranking_quality's (a), (b), (c) with many replications, and bench-sized subsets."""
    runs: dict[str, list[list[tuple[int, bool]]]] = {"a": [], "b": [], "c": []}
    reps = list(range(args.baseline_replications))
    chunks = [reps[w :: args.workers] for w in range(args.workers)]
    with ProcessPoolExecutor(args.workers) as executor:
        jobs = [(pool, n, seats, args.max_matches, chunk) for chunk in chunks]
        for done in executor.map(rq.replicate_many, jobs):
            for one in done:
                for method, points in one.items():
                    runs[method].append(points)
    methods = {}
    for m in "abc":
        summary = rq.summarise(runs[m], seed=7)
        summary["se"] = [
            math.sqrt(max(p * (1 - p), 1e-12) / len(runs[m])) for _, p in summary["curve"]
        ]
        methods[m] = summary
    ia, ib, ic = (methods[m]["to_target_interpolated"] for m in "abc")
    ratios = {
        "b/a": None if ia is None or ib is None else round(ib / ia, 3),
        "c/a": None if ia is None or ic is None else round(ic / ia, 3),
    }
    rng = random.Random(11)
    draws = []
    k = min(args.bench_replications, len(reps))
    for _ in range(args.subsets):
        idx = rng.sample(reps, k)
        draw = {}
        for m in "abc":
            curve = [
                (x, sum(runs[m][i][j][1] for i in idx) / k) for j, (x, _) in enumerate(runs[m][0])
            ]
            draw[m] = rq.first_reaching(curve)
            draw[m + "_interpolated"] = rq.interpolated_reaching(curve)
        draws.append(draw)

    def share(values: list[Any]) -> dict[str, float]:
        counts = collections.Counter("never" if v is None else str(v) for v in values)
        order = sorted(counts, key=lambda x: math.inf if x == "never" else float(x))
        return {x: counts[x] / len(values) for x in order}

    def passes(suffix: str) -> float:
        ok = 0
        for d in draws:
            a, b = d["a" + suffix], d["b" + suffix]
            ok += a is None or (b is not None and b <= a / 2)
        return ok / len(draws)

    return {
        "replications": len(reps),
        "max_matches": args.max_matches,
        "methods": methods,
        "ratios_interpolated": ratios,
        "subsets": {
            "count": args.subsets,
            "replications": k,
            "a_grid": share([d["a"] for d in draws]),
            "b_grid": share([d["b"] for d in draws]),
            "a_never": sum(d["a"] is None for d in draws) / len(draws),
            "b_at_most_half_a": passes(""),
            "b_at_most_half_a_interpolated": passes("_interpolated"),
        },
    }


def print_report(out: dict[str, Any]) -> None:
    """The figures as text."""
    print(
        f"== {out['game']}, noise {out['field_noise']}; pool {out['pool']['sets']} sets "
        f"(seed label {out['pool']['seed_label']!r}), {out['pool']['matches_per_set']} matches "
        f"a set, {out['pool']['tables']} tables"
    )
    mo = out["moments"]
    print(
        "set score per bot: skew, excess kurtosis: "
        + "; ".join(f"{x['skew']:+.2f}, {x['excess_kurtosis']:+.2f}" for x in mo["bots"])
    )
    print(
        "set difference per adjacent pair: skew, excess kurtosis: "
        + "; ".join(f"{x['skew']:+.2f}, {x['excess_kurtosis']:+.2f}" for x in mo["adjacent"])
    )
    st = out["statistics"]
    if st:
        ref = st["score"]["efficiency"]
        print(
            f"\nstatistic     efficiency a set per adjacent pair (ratio to score)   to 0.9 "
            f"(grid, interpolated), {out['replications']} replications"
        )
        for name, r in st.items():
            eff = ", ".join(
                f"{e:.3f} ({e / s:.2f})" for e, s in zip(r["efficiency"], ref, strict=True)
            )
            print(
                f"{name:12s}  {eff:52s}  {r['to_target'] or 'never'}, "
                f"{r['to_target_interpolated'] or 'never'}"
            )
        print("P(exact order), score: " + " ".join(f"{m}:{p:.3f}" for m, p in st["score"]["curve"]))
    base = out.get("baseline")
    if base:
        print(f"\nbaseline: ranking_quality methods, {base['replications']} replications")
        for m in "abc":
            r = base["methods"][m]
            curve = " ".join(f"{x}:{p:.3f}" for (x, p) in r["curve"])
            print(
                f"({m}) to 0.9 at {r['to_target'] or 'never'} (90% {r['interval']}), "
                f"interpolated {r['to_target_interpolated'] or 'never'} "
                f"(90% {r['interval_interpolated']}); SE at most {max(r['se']):.3f}"
            )
            print(f"    P: {curve}")
        print(f"interpolated ratios: {base['ratios_interpolated']}")
        sub = base["subsets"]
        print(f"over {sub['count']} subsets of {sub['replications']} replications:")
        print("  (a) grid value: " + ", ".join(f"{k} {v:.2f}" for k, v in sub["a_grid"].items()))
        print("  (b) grid value: " + ", ".join(f"{k} {v:.2f}" for k, v in sub["b_grid"].items()))
        print(f"  (a) never reaches 0.9: {sub['a_never']:.2f}")
        print(
            f"  b <= a/2 (or a never): grid {sub['b_at_most_half_a']:.2f}, "
            f"interpolated {sub['b_at_most_half_a_interpolated']:.2f}"
        )


def main() -> None:
    """Parse the options, play or load the pool, and report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", default="kansas-city", help="the game benched")
    parser.add_argument("--noise", default="0,0.1,0.2,0.3", help="field noises, strongest first")
    parser.add_argument(
        "--pool-sets", type=int, default=0, help="sets in the pool (default: ranking_quality's)"
    )
    parser.add_argument(
        "--pool-seed", default="pool", help="pool seed label ('pool': ranking_quality's own)"
    )
    parser.add_argument(
        "--replications", type=int, default=20000, help="schedules per statistic (0: skip)"
    )
    parser.add_argument("--max-sets", type=int, default=12, help="sets per schedule")
    parser.add_argument("--mix", default="0.25,0.5,1,2,4", help="L of the score+L statistics")
    parser.add_argument("--clip", default="10,15,20", help="C of the winsorC statistics")
    parser.add_argument(
        "--baseline-replications", type=int, default=2000, help="(a)-(c) replications (0: skip)"
    )
    parser.add_argument("--max-matches", type=int, default=128, help="longest baseline schedule")
    parser.add_argument("--subsets", type=int, default=1000, help="bench-sized subsets drawn")
    parser.add_argument(
        "--bench-replications", type=int, default=200, help="replications in each subset"
    )
    parser.add_argument(
        "--cache", default=str(DEFAULT_CACHE), help="directory for pools ('' for none)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    noises = tuple(float(x) for x in args.noise.split(","))
    rq.FIELDS[args.game] = noises
    seats, _ = rq.field_of(args.game)
    n = len(noises)
    sets = args.pool_sets or rq.POOL_SETS[args.game]
    started = time.perf_counter()
    cache = Path(args.cache) if args.cache else None
    pool = load_pool(args.game, sets, args.pool_seed, args.workers, cache)
    out: dict[str, Any] = {
        "game": args.game,
        "field_noise": list(noises),
        "pool": {
            "sets": sets,
            "seed_label": args.pool_seed,
            "matches_per_set": len(pool[0][1]),
            "tables": len({t for t, _ in pool}),
        },
        "moments": pool_moments(pool, n),
        "replications": args.replications,
        "statistics": {},
    }
    print(f"pool ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.replications:
        mixes = [float(x) for x in args.mix.split(",") if x]
        clips = [float(x) for x in args.clip.split(",") if x]
        out["statistics"] = study(pool, n, statistics_of(pool, mixes, clips), args)
        print(f"statistics done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.baseline_replications:
        out["baseline"] = baseline(pool, n, seats, args)
        print(f"baseline done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print_report(out)


if __name__ == "__main__":
    main()
