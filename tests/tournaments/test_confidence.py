"""P(A ranks above B) from per-set differences: Student's t distribution function against
numerical integration, hand-made numbers, the standings' neighbours of a stored tournament,
and seeded simulations of the cross-table interval's coverage and of P(above)'s calibration."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from statistics import fmean

import pytest

from tournaments.confidence import p_above, resolved, t_cdf
from tournaments.ratings import SeatOutcome
from tournaments.standings import estimate, summarise
from tournaments.store import Store

REPLICATIONS = 2000
# Three binomial standard errors of a 0.95 (or 0.05) rate over REPLICATIONS runs: 0.0146.
TOLERANCE = 3 * math.sqrt(0.95 * 0.05 / REPLICATIONS)


def t_density(x: float, df: int) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))


def integrated_cdf(t: float, df: int, steps: int = 4000) -> float:
    """0.5 plus Simpson's rule from 0 to t: independent of the series under test."""
    h = t / steps
    inner = sum((4 if k % 2 else 2) * t_density(k * h, df) for k in range(1, steps))
    return 0.5 + h / 3 * (t_density(0.0, df) + inner + t_density(t, df))


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 8, 13, 30, 201])
@pytest.mark.parametrize("t", [0.3, 1.0, 2.1, 4.5])
def test_t_cdf_agrees_with_the_integrated_density(df: int, t: float) -> None:
    assert t_cdf(t, df) == pytest.approx(integrated_cdf(t, df), abs=1e-9)
    assert t_cdf(-t, df) == pytest.approx(1.0 - t_cdf(t, df), abs=1e-15)


def test_t_cdf_on_hand_made_numbers() -> None:
    assert t_cdf(1.0, 1) == pytest.approx(0.75, abs=1e-15)  # Cauchy: 1/2 + atan(1)/π
    assert t_cdf(1.0, 2) == pytest.approx(0.5 + 1 / (2 * math.sqrt(3)), abs=1e-15)
    assert t_cdf(0.0, 7) == 0.5
    # The 97.5 % quantiles tournaments/sequential.py tabulates for 1 and 3 degrees of freedom.
    assert t_cdf(12.706204736174698, 1) == pytest.approx(0.975, abs=1e-12)
    assert t_cdf(3.182446305284263, 3) == pytest.approx(0.975, abs=1e-12)
    assert t_cdf(1.959963984540054, 100_000) == pytest.approx(0.975, abs=1e-5)
    assert (t_cdf(math.inf, 3), t_cdf(-math.inf, 3)) == (1.0, 0.0)
    with pytest.raises(ValueError, match="at least 1"):
        t_cdf(1.0, 0)


def test_p_above_on_hand_made_numbers() -> None:
    # 1, 2, 3, 4: mean 2.5, s/√n = √(5/3)/2, t = √15 = 3.8730, 3 degrees of freedom:
    # θ = atan(√5), P = 1/2 + (θ + sin θ cos θ)/π with sin θ cos θ = √5/6.
    theta = math.atan(math.sqrt(5))
    assert p_above([1.0, 2.0, 3.0, 4.0]) == pytest.approx(
        0.5 + (theta + math.sqrt(5) / 6) / math.pi, abs=1e-12
    )
    assert p_above([1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.98477, abs=1e-5)
    # -3, 3: mean 0 whatever the spread.
    assert p_above([-3.0, 3.0]) == 0.5
    # 1, 3: mean 2, s = √2, s/√2 = 1, t = 2 on one degree of freedom: 1/2 + atan(2)/π.
    assert p_above([1.0, 3.0]) == pytest.approx(0.5 + math.atan(2) / math.pi, abs=1e-12)
    assert p_above([-1.0, -3.0]) == pytest.approx(0.5 - math.atan(2) / math.pi, abs=1e-12)
    assert (p_above([2.0, 2.0, 2.0]), p_above([0.0, 0.0]), p_above([-1.0, -1.0])) == (1, 0.5, 0)
    assert p_above([5.0]) is None and p_above([]) is None
    assert resolved(0.95, 0.95) and not resolved(0.9499, 0.95) and not resolved(None, 0.5)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


# Per round (one deal: the single table of 3 bots in its 3 rotations), each bot's score.
ROUNDS = [
    {"alpha": 10, "bravo": 4, "charlie": 1},
    {"alpha": 6, "bravo": 5, "charlie": 7},
    {"alpha": 9, "bravo": 3, "charlie": 2},
]


def test_standings_neighbours_carry_p_above_from_their_per_deal_differences(
    store: Store,
) -> None:
    for name in ("charlie", "alpha", "bravo"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["charlie", "alpha", "bravo"], rounds=3, seed=8)
    assert t.id is not None
    names = {b.id: b.name for b in store.tournament_entrants(t.id)}
    before = summarise(store.tournament_rows(t.id))
    assert before.neighbours == [] and before.to_json()["neighbours"] == []
    for match in store.pending_matches(t.id):
        assert match.id is not None
        scores = ROUNDS[match.round]
        store.record_result(match.id, [SeatOutcome(scores[names[b]]) for b in match.seats])

    result = summarise(store.tournament_rows(t.id))
    # Means: alpha 25/3, bravo 4, charlie 10/3.
    assert [s.bot for s in result.standings] == ["alpha", "bravo", "charlie"]
    # Per-deal differences: alpha - bravo 6, 1, 6; bravo - charlie 3, -2, 1.
    top, bottom = result.neighbours
    assert (top.a, top.b, bottom.a, bottom.b) == ("alpha", "bravo", "bravo", "charlie")
    assert top.difference == estimate([6.0, 1.0, 6.0])
    assert top.p_above == pytest.approx(p_above([6.0, 1.0, 6.0]), abs=1e-15)
    assert bottom.p_above == pytest.approx(p_above([3.0, -2.0, 1.0]), abs=1e-15)
    # By hand, alpha - bravo: mean 13/3, s = √(25/3), t = (13/3)/(5/3) = 2.6 on 2 df:
    # P = 1/2 + t / (2 √(2 + t²)).
    assert top.p_above == pytest.approx(0.5 + 2.6 / (2 * math.sqrt(2 + 2.6**2)), abs=1e-12)
    assert 0.5 < (bottom.p_above or 0.0) < (top.p_above or 0.0) < 0.95
    ids = {s.bot: s.bot_id for s in result.standings}
    assert result.p_above_next(ids["alpha"]) == top.p_above
    assert result.p_above_next(ids["charlie"]) is None
    data = result.to_json()
    assert [s["p_above_next"] for s in data["standings"]] == [
        top.p_above,
        bottom.p_above,
        None,
    ]
    assert [(n["a"], n["b"], n["n"], n["p_above"]) for n in data["neighbours"]] == [
        ("alpha", "bravo", 3, top.p_above),
        ("bravo", "charlie", 3, bottom.p_above),
    ]


Draw = Callable[[random.Random], float]


def set_value(rng: random.Random, truth: float, rotations: int, draw: Draw) -> float:
    """One set's value as summarise builds it: the mean over its rotations of A - B, where
    the deal's luck is shared by the rotations and each match adds its own."""
    deal = draw(rng)
    return fmean(truth + deal + 0.5 * draw(rng) for _ in range(rotations))


def normal(rng: random.Random) -> float:
    return rng.gauss(0.0, 3.0)


def lumpy(rng: random.Random) -> float:
    """Whole points, fat-tailed: most deals close, a few lopsided either way."""
    return float(rng.choice((-6, -2, -1, -1, 0, 0, 0, 1, 1, 2, 6)))


@pytest.mark.parametrize(
    ("draw", "sets", "seed"),
    [(normal, 4, 1), (normal, 12, 2), (lumpy, 40, 3)],
)
def test_the_cross_table_interval_covers_the_true_difference_at_95_percent(
    draw: Draw, sets: int, seed: int
) -> None:
    rng = random.Random(seed)
    truth = 0.7
    covered = 0
    for _ in range(REPLICATIONS):
        e = estimate([set_value(rng, truth, 3, draw) for _ in range(sets)])
        assert e.low is not None and e.high is not None
        covered += e.low <= truth <= e.high
    assert abs(covered / REPLICATIONS - 0.95) <= TOLERANCE, covered


def test_an_interval_over_matches_instead_of_sets_would_fail_the_coverage_check() -> None:
    # The check has teeth: the rotations of a deal share its luck, so counting each match as
    # an observation narrows the interval and it covers the truth far less than 95 %.
    rng = random.Random(4)
    truth = 0.7
    covered = 0
    for _ in range(REPLICATIONS):
        matches = []
        for _ in range(12):
            deal = normal(rng)
            matches += [truth + deal + 0.5 * normal(rng) for _ in range(3)]
        e = estimate(matches)
        assert e.low is not None and e.high is not None
        covered += e.low <= truth <= e.high
    assert covered / REPLICATIONS < 0.95 - 3 * TOLERANCE


@pytest.mark.parametrize(("draw", "sets", "seed"), [(normal, 6, 5), (lumpy, 40, 6)])
def test_p_above_is_calibrated_when_the_bots_are_equal(draw: Draw, sets: int, seed: int) -> None:
    # With a true difference of 0, P(above) ≥ 0.95 should happen in 5 % of runs, and
    # P(above) is then uniform: below 0.5 half the time.
    rng = random.Random(seed)
    ps = []
    for _ in range(REPLICATIONS):
        p = p_above([set_value(rng, 0.0, 3, draw) for _ in range(sets)])
        assert p is not None
        ps.append(p)
    assert abs(sum(p >= 0.95 for p in ps) / REPLICATIONS - 0.05) <= TOLERANCE
    assert abs(sum(p < 0.5 for p in ps) / REPLICATIONS - 0.5) <= 3 * math.sqrt(0.25 / REPLICATIONS)


def test_p_above_grows_with_the_true_gap() -> None:
    rng = random.Random(7)
    rates = []
    for truth in (0.0, 1.0, 5.0):
        hits = sum(
            (p_above([set_value(rng, truth, 3, normal) for _ in range(10)]) or 0.0) >= 0.95
            for _ in range(500)
        )
        rates.append(hits / 500)
    assert rates[0] < 0.1 < rates[1] < rates[2] and rates[2] > 0.9
