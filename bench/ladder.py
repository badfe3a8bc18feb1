"""How fast a ladder's matchmaking ranks an open field of house bots of known strength (issue 34).

Usage: python bench/ladder.py [--games G,...] [--field N] [--spread S] [--replications R]
       [--matches M] [--methods abc] [--fit] [--fit-sets S] [--cost-picks P] [--workers W]
       [--json]

The field. N bots of graded strength on the surrogate's strength axis, the noise q at which
the game's rule bot plays a random legal action instead of its rule: normal quantiles around
0.5 with standard deviation S (default 1.5), as in an open field, sparse at the top and dense
in the middle. The house bots span q in [0, 1] only, so the fitted line is extrapolated past
it (bots stronger than the rule bot, weaker than a random one); a table-mate's carelessness
in m is taken within [0, 1], so more noise is worse at every table and the true order is the
field's.

The surrogate. Playing real matches for thousands of sets per replication is too slow, so
each set is drawn from a score model fitted to real matches of the house bots
(bench/house_play.py's play_noisy): `--fit` plays S duplicate sets (every rotation of one
deal, tournaments.schedule.rotations) at random tables of bots at 11 noise levels
0, 0.1, ..., 1, and fits by least squares

    score = a + b q + c m + d q m + deal(seat) + e

per seat of a match, q the seat's noise and m its table-mates' mean noise (d is the
table-mate effect: a bot's edge over a noisier one grows with careless table-mates); the
deal effect of a seat position is shared by a set's rotations (the luck duplicate deals
cancel), and deal and match residuals are Gaussian with their fitted variances and
within-table covariances. Simulated scores are rounded to whole points (so seats tie as in
real play). The fit prints the variance of a pair's set difference observed in the real sets
and predicted by the surrogate at the same tables. SURROGATES holds the fit used by default
(how it was made is printed with it); --fit refits first (real sets kept in the temporary
directory) and uses the new one.

The rules. Each replication runs, on the same surrogate and seeds:
  (a) a balanced round-robin subset: tournaments.schedule.balanced_tables with the fewest
      tables where every pair meets, played in order round after round on fresh deals;
  (b) "nearest": Halite III's rule (tournaments.matchmaking);
  (c) "cardshark": tournaments.matchmaking's default rule;
each a set at a time (the ladder rules given the sets each pair sat at together, as `ladder
run` gives them), rated by the rating of record (tournaments.ratings.apply_set, TrueSkill
per match of the set, default settings), until M matches. Every round of checks it records
Spearman's rho of the mu order with the true order and whether the top 5 and top 10 are
exactly right; it reports their means at M, and the matches at which the mean rho first
reaches 0.99 and the mean P(top 5 exact) 0.5 (linearly interpolated between checks).
Then, for (b) and (c), a new bot of a strength drawn like the field's joins the rated field
and the ladder goes on: whether it plays at the first pick, the sets it plays until it is
ranked (by mu) within ±2 of its true place for good (through 60 of its sets), its sigma then,
and the sets until it is no longer provisional.

Cost. The mean and largest time of one pick (P picks) at 1,000 and 10,000 bots, 3 seats, one
bot per author (three bots an author), for each rule, in an established ladder (every bot
past its first sets) and one where every bot is new.

All draws are seeded. Text by default; --json prints one JSON object instead.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "clients/python"), str(ROOT / "clients/python/examples")]

from games.registry import get_game  # noqa: E402
from tournaments.errors import TableCountError  # noqa: E402
from tournaments.matchmaking import (  # noqa: E402
    Candidate,
    Rule,
    pair_key,
    pick_table,
    provisional,
)
from tournaments.ratings import (  # noqa: E402
    Rating,
    SeatOutcome,
    TrueSkillSettings,
    apply_set,
    placements,
)
from tournaments.schedule import balanced_tables, min_covering_tables, rotations  # noqa: E402

FIT_NOISES = tuple(i / 10 for i in range(11))
SETTLE_SETS = 60
SETTINGS = TrueSkillSettings()


@dataclass(frozen=True)
class Surrogate:
    """A fitted score model: mean coefficients, deal and match residual (co)variances."""

    coef: tuple[float, ...]
    deal_var: float
    deal_cov: float
    match_var: float
    match_cov: float
    fitted_on: str

    def mean(self, q: float, m: float) -> float:
        """Expected score of a seat of noise q among table-mates of mean noise m."""
        return sum(c * x for c, x in zip(self.coef, features(q, m), strict=True))


# Fitted by `fit` (`--fit`): Knaves on 330 sets (1,980 matches), Knives on 200 sets (2,000
# matches); docs/ladder.md gives the fit's figures.
SURROGATES: dict[str, Surrogate] = {
    "knaves": Surrogate(
        coef=(13.4270, -2.9910, 6.9758, -3.7800),
        deal_var=9.5442,
        deal_cov=-3.7821,
        match_var=36.6090,
        match_cov=-7.6156,
        fitted_on="330 real duplicate sets (1,980 matches) of Knaves house bots at noise "
        "0, 0.1, ..., 1 on random tables",
    ),
    "knives": Surrogate(
        coef=(5.7858, -1.8667, 4.5080, -2.1875),
        deal_var=0.4480,
        deal_cov=-0.0608,
        match_var=6.5417,
        match_cov=0.0934,
        fitted_on="200 real duplicate sets (2,000 matches) of Knives house bots at noise "
        "0, 0.1, ..., 1 on random tables",
    ),
}


def correlated(rng: random.Random, n: int, var: float, cov: float) -> list[float]:
    """n Gaussian draws of variance var and pairwise covariance cov (cov in [-var/(n-1), var])."""
    if var <= 0:
        return [0.0] * n
    c = max(-1 / (n - 1), min(1.0, cov / var))
    if c >= 0:  # a shared part and one's own
        shared = rng.gauss(0, math.sqrt(c * var))
        return [shared + rng.gauss(0, math.sqrt((1 - c) * var)) for _ in range(n)]
    # z - a * mean(z): covariance over variance (a² - 2a) / (n - 2a + a²) = c
    u = c * n / (1 - c)
    a = 1 - math.sqrt(1 + u)
    z = [rng.gauss(0, 1) for _ in range(n)]
    mean = sum(z) / n
    e = [x - a * mean for x in z]
    scale = math.sqrt(var / (1 - 2 * a / n + a * a / n))
    return [x * scale for x in e]


def simulate_set(
    model: Surrogate, table: Sequence[int], noise: Sequence[float], rng: random.Random
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """A duplicate set at `table` (field positions) drawn from the surrogate: (seats, ranks)."""
    return [
        (seats, placements([SeatOutcome(float(x)) for x in scores]))
        for seats, scores in simulate_scores(model, table, noise, rng)
    ]


# ---------------------------------------------------------------------------------------
# Fitting the surrogate to real matches


def play_fit_set(
    job: tuple[str, tuple[int, ...], int],
) -> list[tuple[tuple[int, ...], list[float]]]:
    """One real duplicate set of house bots at FIT_NOISES positions `table`."""
    from house_play import play_noisy

    game, table, seed = job
    return [
        (seats, play_noisy(game, seed, [FIT_NOISES[p] for p in seats], f"ladder-fit:{seed}:{r}"))
        for r, seats in enumerate(rotations(table))
    ]


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b (Gaussian elimination with partial pivoting)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]


def features(q: float, m: float) -> list[float]:
    """The fit's regressors: 1, the seat's noise q, its table-mates' mean noise m, and q m."""
    return [1.0, q, m, q * m]


def fit(game: str, sets: int, workers: int) -> tuple[Surrogate, dict[str, Any]]:
    """Play `sets` real sets (kept in the temporary directory for the next fit) and fit the
    surrogate; with the fit's diagnostics."""
    seats = get_game(game).spec.default_seats
    rng = random.Random(f"ladder-fit:{game}")
    tables = [tuple(sorted(rng.sample(range(len(FIT_NOISES)), seats))) for _ in range(sets)]
    jobs = [(game, t, rng.randrange(2**53)) for t in tables]
    cache = Path(tempfile.gettempdir()) / f"cardshark-ladder-fit-{game}-{sets}.pickle"
    if cache.exists():
        played = pickle.loads(cache.read_bytes())
    else:
        with ProcessPoolExecutor(workers) as ex:
            played = list(ex.map(play_fit_set, jobs, chunksize=4))
        cache.write_bytes(pickle.dumps(played))
    rows = []  # (set, rotation, seat position, q, m, score)
    for k, matches in enumerate(played):
        for r, (order, scores) in enumerate(matches):
            total = sum(FIT_NOISES[b] for b in order)
            for p, (b, s) in enumerate(zip(order, scores, strict=True)):
                q = FIT_NOISES[b]
                rows.append((k, r, p, q, (total - q) / (seats - 1), s))
    width = len(features(0.0, 0.0))
    xtx = [[0.0] * width for _ in range(width)]
    xty = [0.0] * width
    for *_, q, m, s in rows:
        f = features(q, m)
        for i in range(width):
            xty[i] += f[i] * s
            for j in range(width):
                xtx[i][j] += f[i] * f[j]
    coef = solve(xtx, xty)
    res: dict[tuple[int, int, int], float] = {}
    for k, r, p, q, m, s in rows:
        res[k, r, p] = s - sum(c * x for c, x in zip(coef, features(q, m), strict=True))
    n_rot = len(rotations(range(seats)))
    same_seat: list[float] = []
    cross_seat: list[float] = []
    in_match: list[float] = []
    for k in range(sets):
        for r1, r2 in itertools.permutations(range(n_rot), 2):
            for p1 in range(seats):
                for p2 in range(seats):
                    (same_seat if p1 == p2 else cross_seat).append(res[k, r1, p1] * res[k, r2, p2])
        for r in range(n_rot):
            for p1, p2 in itertools.permutations(range(seats), 2):
                in_match.append(res[k, r, p1] * res[k, r, p2])
    total_var = statistics.fmean(x * x for x in res.values())
    deal_var = statistics.fmean(same_seat)
    deal_cov = statistics.fmean(cross_seat)
    model = Surrogate(
        coef=tuple(coef),
        deal_var=deal_var,
        deal_cov=deal_cov,
        match_var=total_var - deal_var,
        match_cov=statistics.fmean(in_match) - deal_cov,
        fitted_on=(
            f"{sets} real duplicate sets ({sets * n_rot} matches) of {game} house bots at "
            f"noise 0, 0.1, ..., 1 on random tables"
        ),
    )
    # Validation: variance of a pair's set difference (mean over the set's matches).
    observed, predicted = [], []
    sim = random.Random(1)
    for table, matches in zip(tables, played, strict=True):
        for a, b in itertools.combinations(table, 2):
            d = [sc[o.index(a)] - sc[o.index(b)] for o, sc in matches]
            m_a = model.mean(
                FIT_NOISES[a], (sum(FIT_NOISES[x] for x in table) - FIT_NOISES[a]) / (seats - 1)
            )
            m_b = model.mean(
                FIT_NOISES[b], (sum(FIT_NOISES[x] for x in table) - FIT_NOISES[b]) / (seats - 1)
            )
            observed.append(statistics.fmean(d) - (m_a - m_b))
            for _ in range(4):
                draw = simulate_scores(model, table, FIT_NOISES, sim)
                ds = [sc[o.index(a)] - sc[o.index(b)] for o, sc in draw]
                predicted.append(statistics.fmean(ds) - (m_a - m_b))
    diagnostics = {
        "rows": len(rows),
        "pair_set_difference_variance_observed": statistics.fmean(x * x for x in observed),
        "pair_set_difference_variance_predicted": statistics.fmean(x * x for x in predicted),
    }
    return model, diagnostics


def simulate_scores(
    model: Surrogate, table: Sequence[int], noise: Sequence[float], rng: random.Random
) -> list[tuple[tuple[int, ...], list[int]]]:
    """Like simulate_set, with the rounded scores instead of ranks."""
    k = len(table)
    means = {b: model.mean(noise[b], mates(noise, table, b)) for b in table}
    deal = correlated(rng, k, model.deal_var, model.deal_cov)
    out = []
    for seats in rotations(table):
        e = correlated(rng, k, model.match_var, model.match_cov)
        out.append((seats, [round(means[b] + deal[p] + e[p]) for p, b in enumerate(seats)]))
    return out


# ---------------------------------------------------------------------------------------
# The field and the ladders


def field_noises(n: int, spread: float) -> list[float]:
    """n bots' noise on the surrogate's strength axis, strongest first: normal quantiles
    around 0.5 with standard deviation `spread` (an open field: sparse at the top, dense in
    the middle). Past [0, 1] the fitted line is extrapolated; table-mates' carelessness m
    is taken within [0, 1] (see mates)."""
    dist = statistics.NormalDist(0.5, spread)
    return [dist.inv_cdf((i + 0.5) / n) for i in range(n)]


def mates(noise: Sequence[float], table: Sequence[int], b: int) -> float:
    """b's table-mates' mean noise, each taken within [0, 1] (the fitted range): so more
    noise is worse at every table, and the true order is the field's."""
    others = [min(1.0, max(0.0, noise[o])) for o in table if o != b]
    return sum(others) / len(others)


def spearman(order: Sequence[int]) -> float:
    """Spearman's rho of `order` (bots best first) with the true order 0, 1, ..."""
    n = len(order)
    d2 = sum((i - b) ** 2 for i, b in enumerate(order))
    return 1 - 6 * d2 / (n * (n * n - 1))


def mu_order(ratings: dict[int, Rating], bots: Sequence[int], tiebreak: Sequence[int]) -> list[int]:
    """Bots best first by mu, equal mus (bots not yet played) by `tiebreak`, a random key."""
    return sorted(bots, key=lambda b: (-ratings[b].mu, tiebreak[b]))


Job = tuple[str, str, int, float, int, int, int, list[tuple[int, ...]]]


def covering_tables(n: int, seats: int) -> list[tuple[int, ...]]:
    """A balanced subset where every pair meets: the fewest tables balanced_tables finds."""
    count = min_covering_tables(n, seats)
    while True:
        try:
            return balanced_tables(n, seats, count, 1)
        except TableCountError:
            count += max(1, count // 50)


def run_one(job: Job) -> dict[str, Any]:
    """One replication of one rule: the checks along the way, then a newcomer (ladder rules)."""
    game, method, n, spread, budget, check, seed, cover = job
    model = SURROGATES[game]
    seats = get_game(game).spec.default_seats
    noise = field_noises(n, spread)
    sim = random.Random(f"{seed}:sim:{method}")
    pick_rng = random.Random(f"{seed}:pick:{method}")
    tiebreak = random.Random(f"{seed}:ties").sample(range(n + 1), n + 1)
    ratings = {b: SETTINGS.initial() for b in range(n)}
    played = [0] * n
    last = [0.0] * n
    met: dict[tuple[int, int], int] = {}  # sets each pair sat at together
    per_set = len(rotations(range(seats)))
    tables = cover if method == "round-robin" else None
    checks = []
    sets = 0

    def play(table: Sequence[int]) -> None:
        nonlocal sets
        changes = apply_set(SETTINGS, ratings, simulate_set(model, table, noise, sim))
        for c in changes:
            ratings[c.bot_id] = c.after
            played[c.bot_id] += 1
            last[c.bot_id] = sets + 1
        for a, b in itertools.combinations(table, 2):
            met[pair_key(a, b)] = met.get(pair_key(a, b), 0) + 1
        sets += 1

    def candidates(bots: Sequence[int]) -> list[Candidate]:
        return [
            Candidate(b, ratings[b].mu, ratings[b].sigma, None, played[b], 0, last[b]) for b in bots
        ]

    while sets * per_set < budget:
        if tables is not None:
            table: Sequence[int] | None = tables[sets % len(tables)]
        else:
            rule: Rule = "nearest" if method == "nearest" else "cardshark"
            table = pick_table(candidates(range(n)), seats, pick_rng, rule, meetings=met)
        assert table is not None
        play(table)
        if (sets * per_set) % check < per_set:
            order = mu_order(ratings, range(n), tiebreak)
            checks.append(
                (
                    sets * per_set,
                    spearman(order),
                    order[:5] == list(range(5)),
                    order[:10] == list(range(10)),
                )
            )
    out: dict[str, Any] = {"checks": checks}
    if tables is not None:
        return out
    # A newcomer of random strength joins the rated field.
    u = random.Random(f"{seed}:newcomer").gauss(0.5, spread)
    q_new = min(noise[-1], max(noise[0], u))
    noise = [*noise, q_new]
    new = n
    true_place = sum(1 for q in noise[:n] if q < q_new)
    truth = sorted(range(n + 1), key=lambda b: noise[b])
    ratings[new] = SETTINGS.initial()
    played.append(0)
    last.append(0.0)
    errors: list[int] = []
    sigmas: list[float] = []
    provisional_sets = None
    picks = 0
    while played[new] < SETTLE_SETS and picks < SETTLE_SETS * (n + 1):
        rule = "nearest" if method == "nearest" else "cardshark"
        table = pick_table(candidates(range(n + 1)), seats, pick_rng, rule, meetings=met)
        assert table is not None
        picks += 1
        play(table)
        if new in table:
            place = mu_order(ratings, range(n + 1), tiebreak).index(new)
            errors.append(abs(place - truth.index(new)))
            sigmas.append(ratings[new].sigma)
            if provisional_sets is None and not provisional(ratings[new]):
                provisional_sets = played[new]
        if picks == 1:
            out["newcomer_in_first_pick"] = new in table
    settled = len(errors)
    while settled > 0 and errors[settled - 1] <= 2:
        settled -= 1
    out["newcomer"] = {
        "true_place": true_place,
        "sets_played": len(errors),
        "sets_to_within_2": settled + 1 if settled < len(errors) else None,
        "sets_to_not_provisional": provisional_sets,
        "sigma_when_within_2": sigmas[settled] if settled < len(errors) else None,
    }
    return out


# ---------------------------------------------------------------------------------------
# Summaries, cost, report


METHODS = {"a": "round-robin", "b": "nearest", "c": "cardshark"}


def reaching(curve: Sequence[tuple[int, float]], target: float) -> float | None:
    """Matches at which the curve first reaches `target`, linearly interpolated."""
    for i, (x, y) in enumerate(curve):
        if y >= target:
            if i == 0:
                return float(x)
            x0, y0 = curve[i - 1]
            return x0 + (x - x0) * (target - y0) / (y - y0)
    return None


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean curves, values at the budget, matches to the targets, newcomers."""
    grid = [c[0] for c in runs[0]["checks"]]
    rho = [(x, statistics.fmean(r["checks"][i][1] for r in runs)) for i, x in enumerate(grid)]
    top5 = [(x, statistics.fmean(r["checks"][i][2] for r in runs)) for i, x in enumerate(grid)]
    top10 = [(x, statistics.fmean(r["checks"][i][3] for r in runs)) for i, x in enumerate(grid)]
    out: dict[str, Any] = {
        "matches": grid[-1],
        "rho": rho[-1][1],
        "p_top5_exact": top5[-1][1],
        "p_top10_exact": top10[-1][1],
        "matches_to_rho_0.99": reaching(rho, 0.99),
        "matches_to_p_top5_0.5": reaching(top5, 0.5),
        "matches_to_p_top10_0.5": reaching(top10, 0.5),
        "curve": [
            {"matches": x, "rho": round(a, 4), "p_top5": round(b, 3), "p_top10": round(c, 3)}
            for (x, a), (_, b), (_, c) in zip(rho, top5, top10, strict=True)
        ],
    }
    if "newcomer" in runs[0]:
        placed = [r["newcomer"]["sets_to_within_2"] for r in runs]
        sets = sorted(math.inf if p is None else p for p in placed)
        prov = sorted(
            math.inf
            if r["newcomer"]["sets_to_not_provisional"] is None
            else r["newcomer"]["sets_to_not_provisional"]
            for r in runs
        )

        def quantile(xs: list[float], q: float) -> float | None:
            x = xs[min(len(xs) - 1, int(q * len(xs)))]
            return None if math.isinf(x) else x

        out["newcomer"] = {
            "in_first_pick": statistics.fmean(r.get("newcomer_in_first_pick", False) for r in runs),
            "sets_to_within_2_median": quantile(sets, 0.5),
            "sets_to_within_2_p90": quantile(sets, 0.9),
            "share_within_2_by_30_sets": statistics.fmean(x <= 30 for x in sets),
            "sets_to_not_provisional_median": quantile(prov, 0.5),
            "sigma_when_within_2_median": statistics.median(
                r["newcomer"]["sigma_when_within_2"] or math.inf for r in runs
            ),
        }
    return out


def pick_cost(bots: int, rule: Rule, new: bool, picks: int = 100) -> dict[str, float]:
    """Mean and largest milliseconds of one pick among `bots` candidates."""
    rng = random.Random(f"cost:{bots}")
    field = [
        Candidate(
            b,
            rng.gauss(25, 5),
            SETTINGS.sigma if new else rng.uniform(0.8, 3),
            f"author{b // 3}",
            0 if new else rng.randrange(10, 1000),
            0,
            0.0 if new else rng.random(),
        )
        for b in range(bots)
    ]
    times = []
    pick_rng = random.Random(1)
    for _ in range(picks):
        t = time.perf_counter()
        pick_table(field, 3, pick_rng, rule, one_per_author=True)
        times.append((time.perf_counter() - t) * 1000)
    return {"mean": round(statistics.fmean(times), 3), "max": round(max(times), 3)}


def bench_game(game: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every method's replications on one game's field."""
    seats = get_game(game).spec.default_seats
    per_set = len(rotations(range(seats)))
    budget = args.matches or DEFAULT_MATCHES[game]
    check = per_set * max(1, args.field // seats)
    cover = covering_tables(args.field, seats)
    jobs: list[Job] = [
        (game, METHODS[m], args.field, args.spread, budget, check, rep, cover)
        for m in args.methods
        for rep in range(args.replications)
    ]
    with ProcessPoolExecutor(args.workers) as ex:
        done = list(ex.map(run_one, jobs, chunksize=1))
    out: dict[str, Any] = {
        "field": args.field,
        "seats": seats,
        "matches_per_set": per_set,
        "budget_matches": budget,
        "round_robin_tables": len(cover),
        "replications": args.replications,
        "spread": args.spread,
        "noise": [round(q, 4) for q in field_noises(args.field, args.spread)],
        "surrogate": asdict(SURROGATES[game]),
        "methods": {},
    }
    for i, m in enumerate(args.methods):
        runs = done[i * args.replications : (i + 1) * args.replications]
        out["methods"][m] = {"rule": METHODS[m], **summarise(runs)}
    if set(args.methods) != set("abc"):
        return out
    a, c = out["methods"]["a"], out["methods"]["c"]

    def at_most(x: float | None, y: float | None, factor: float) -> bool | None:
        if x is None:
            return None if y is None else False
        return True if y is None else x <= factor * y

    targets = {
        "c_top5_at_most_0.8x_a": at_most(
            c["matches_to_p_top5_0.5"], a["matches_to_p_top5_0.5"], 0.8
        ),
        "c_rho_0.99_at_most_a": at_most(c["matches_to_rho_0.99"], a["matches_to_rho_0.99"], 1.0),
    }
    if game == "knaves":
        median = c["newcomer"]["sets_to_within_2_median"]
        targets["newcomer_within_2_in_30_sets_median"] = median is not None and median <= 30
    out["targets"] = targets
    return out


DEFAULT_SPREAD = 1.5
DEFAULT_MATCHES = {"knaves": 4000, "knives": 3000}


def main() -> None:
    """Parse the options, run the benches, print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", default="knaves,knives", help="games benched")
    parser.add_argument("--field", type=int, default=60, help="bots in the field")
    parser.add_argument(
        "--spread", type=float, default=DEFAULT_SPREAD, help="field's noise standard deviation"
    )
    parser.add_argument("--replications", type=int, default=6, help="replications per rule")
    parser.add_argument("--methods", default="abc", help="which of (a), (b), (c) to run")
    parser.add_argument("--matches", type=int, default=0, help="budget (default per game)")
    parser.add_argument("--fit", action="store_true", help="refit the surrogates first")
    parser.add_argument("--fit-sets", type=int, default=330, help="real sets for --fit")
    parser.add_argument("--cost-picks", type=int, default=100, help="picks timed per size")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    started = time.perf_counter()
    out: dict[str, Any] = {"games": {}, "fits": {}}
    for game in args.games.split(","):
        if args.fit or game not in SURROGATES:
            model, diagnostics = fit(game, args.fit_sets, args.workers)
            SURROGATES[game] = model
            out["fits"][game] = {"surrogate": asdict(model), **diagnostics}
        out["games"][game] = bench_game(game, args)
        print(f"{game} done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    out["pick_ms"] = {
        f"{rule}, {bots} bots, {'all new' if new else 'established'}": pick_cost(
            bots, rule, new, args.cost_picks
        )
        for bots in (1000, 10000)
        for rule in ("cardshark", "nearest", "random")
        for new in (False, True)
    }
    out["target_pick_under_10ms_at_10000"] = all(
        v["mean"] < 10
        for k, v in out["pick_ms"].items()
        if "10000" in k and k.startswith("cardshark")
    )
    out["seconds"] = round(time.perf_counter() - started)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print_report(out)


def print_report(out: dict[str, Any]) -> None:
    """The figures as text."""
    for game, g in out["games"].items():
        print(
            f"== {game}: {g['field']} bots, {g['budget_matches']} matches, "
            f"{g['replications']} replications"
        )
        for m, r in g["methods"].items():
            line = (
                f"({m}) {r['rule']:12s} rho {r['rho']:.4f}  P(top 5) {r['p_top5_exact']:.2f}  "
                f"P(top 10) {r['p_top10_exact']:.2f}  to rho .99: {r['matches_to_rho_0.99']}  "
                f"to P(top 5) .5: {r['matches_to_p_top5_0.5']}"
            )
            if "newcomer" in r:
                nc = r["newcomer"]
                line += (
                    f"  newcomer ±2: median {nc['sets_to_within_2_median']} sets, "
                    f"p90 {nc['sets_to_within_2_p90']}, "
                    f"by 30: {nc['share_within_2_by_30_sets']:.2f}"
                )
            print(line)
        print(f"targets: {g.get('targets')}")
    for k, v in out["pick_ms"].items():
        print(f"pick {k}: {v} ms")
    print(f"{out['seconds']} s")


if __name__ == "__main__":
    main()
