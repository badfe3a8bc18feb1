"""The sequential test on per-set differences: its LLR, bounds and interval on hand-made
numbers, and its error rates on seeded simulations of many runs."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable

import pytest

from tournaments.sequential import (
    BETTER,
    NOT_BETTER,
    UNDECIDED,
    Moments,
    SprtSettings,
    llr,
    mean_interval,
    sprt,
    sprt_steps,
    t_quantile_975,
)


def test_bounds_are_walds() -> None:
    settings = SprtSettings(0.0, 1.0)
    assert settings.lower == pytest.approx(-2.944438979)  # log(0.05 / 0.95)
    assert settings.upper == pytest.approx(2.944438979)  # log(0.95 / 0.05)
    uneven = SprtSettings(0.0, 1.0, alpha=0.05, beta=0.1)
    assert uneven.lower == pytest.approx(math.log(0.1 / 0.95))
    assert uneven.upper == pytest.approx(math.log(0.9 / 0.05))


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"h0": 1.0, "h1": 1.0}, "h1 must be above h0"),
        ({"h0": 0.0, "h1": -1.0}, "h1 must be above h0"),
        ({"h0": 0.0, "h1": 1.0, "alpha": 0.0}, "alpha"),
        ({"h0": 0.0, "h1": 1.0, "beta": 0.5}, "beta"),
        ({"h0": 0.0, "h1": 1.0, "min_sets": 1}, "min_sets"),
    ],
)
def test_impossible_settings_are_refused(kwargs: dict[str, float], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        SprtSettings(**kwargs)  # type: ignore[arg-type]


def test_llr_on_hand_made_sets() -> None:
    # mean 2, variance 1: past the peak at (x - 0)(x - 1) = 1, x = 1/2 + sqrt(5/4), where
    # x^2 = x + 1: (2/2) log((1 + x^2) / (1 + (x - 1)^2)) = log((x + 2) / (3 - x))
    peak = 0.5 + math.sqrt(1.25)
    assert llr([1.0, 3.0], 0.0, 1.0) == pytest.approx(math.log((peak + 2) / (3 - peak)))
    assert llr([1.0, 3.0], 0.0, 1.0) == pytest.approx(llr([11.0, 13.0], 0.0, 1.0))
    assert llr([0.5, 2.5], 0.0, 1.0) < llr([1.0, 3.0], 0.0, 1.0)
    # mean -1, variance 1: before the trough, the mirror image
    assert llr([-2.0, 0.0], 0.0, 1.0) == pytest.approx(-math.log((peak + 2) / (3 - peak)))
    # mean 1, variance 2/3: (3/2) log((2/3 + 1) / (2/3 + 0)), H1 exactly
    assert llr([0.0, 1.0, 2.0], 0.0, 1.0) == pytest.approx(1.5 * math.log(2.5))
    # halfway between the hypotheses: no evidence either way
    assert llr([0.5, 0.5, 0.5], 0.0, 1.0) == pytest.approx(0.0)
    assert llr([], 0.0, 1.0) == 0.0
    # below H0 speaks for H0; swapping the hypotheses negates the ratio
    assert llr([-1.0, 0.0, -2.0], 0.0, 1.0) < 0
    values = [0.3, -1.2, 2.5, 0.9]
    assert llr(values, 0.0, 0.5) == pytest.approx(-llr(values, 0.5, 0.0))
    # the ratio is the moments', however they were added up
    assert llr(Moments.of(values), 0.0, 0.5) == pytest.approx(llr(values, 0.0, 0.5))


def test_identical_sets_at_h0_are_strong_evidence_but_finite() -> None:
    ratio = llr([0.0] * 5, 0.0, 1.0)
    assert math.isfinite(ratio)
    assert ratio == pytest.approx(2.5 * math.log(1e-9 / (1 + 1e-9)))


def test_moments_match_the_statistics_module() -> None:
    rng = random.Random(4)
    values = [rng.gauss(3, 2) for _ in range(50)]
    moments = Moments.of(values)
    assert moments.n == 50
    assert moments.mean == pytest.approx(statistics.fmean(values))
    assert moments.variance == pytest.approx(statistics.pvariance(values))
    assert moments.sample_variance == pytest.approx(statistics.variance(values))


@pytest.mark.parametrize(
    ("df", "quantile"), [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (10, 2.2281),
                         (30, 2.0423), (120, 1.9799), (5000, 1.9600)],
)  # fmt: skip
def test_t_quantiles(df: int, quantile: float) -> None:
    assert t_quantile_975(df) == pytest.approx(quantile, abs=1e-3)


def test_interval_on_hand_made_sets() -> None:
    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = 3.182446 * math.sqrt((5 / 3) / 4)  # t(3) times the standard error
    assert interval.sets == 4 and interval.mean == 2.5
    assert interval.low == pytest.approx(2.5 - half, abs=1e-4)
    assert interval.high == pytest.approx(2.5 + half, abs=1e-4)
    one = mean_interval([7.0])
    assert one.mean == 7.0 and one.low == -math.inf and one.high == math.inf


def test_steps_recompute_the_llr_of_each_prefix_and_stop_at_the_first_verdict() -> None:
    values = [1.0, 1.1, 0.9, 1.0, 1.05, 0.0, 5.0]
    settings = SprtSettings(0.0, 1.0)
    steps = list(sprt_steps(values, settings))
    for k, step in enumerate(steps, start=1):
        prefix = values[:k]
        mean, var = statistics.fmean(prefix), statistics.pvariance(prefix)
        mean = min(mean, 0.5 + math.sqrt(0.25 + var))  # no further than the ratio's peak
        by_hand = k / 2 * math.log((var + mean**2) / (var + (mean - 1) ** 2)) if var else None
        if by_hand is not None:
            assert step.llr == pytest.approx(by_hand)
        assert step.lower == settings.lower and step.upper == settings.upper
    # The ratio is past the upper bound from the first set, but no verdict comes earlier.
    assert all(s.llr > settings.upper for s in steps)
    assert [s.verdict for s in steps] == [None, None, None, None, BETTER]
    assert sprt(values, settings, max_sets=100).verdict == BETTER


def test_a_verdict_each_way_and_undecided_at_the_cap() -> None:
    settings = SprtSettings(0.0, 1.0)
    worse = sprt([-1.0, 0.5, -0.5, 0.0, -1.0, 0.2], settings, max_sets=50)
    assert worse.verdict == NOT_BETTER and worse.last is not None
    assert worse.last.llr <= settings.lower and worse.last.sets == 5
    halfway = [0.5 + d for d in (1.0, -1.0) * 20]  # centred between H0 and H1
    stopped = sprt(halfway, settings, max_sets=10)
    assert stopped.verdict == UNDECIDED and stopped.last is not None
    assert stopped.last.sets == 10 and settings.lower < stopped.last.llr < settings.upper
    assert sprt([], settings, max_sets=10) == type(stopped)(UNDECIDED, None)


Draw = Callable[[random.Random], float]


def normal(rng: random.Random) -> float:
    return rng.gauss(0.0, 1.0)


def lumpy(rng: random.Random) -> float:
    # Card scores are whole points with ties: a symmetric, discrete, fat-tailed spread.
    return rng.choice((-6.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 6.0)) / 3.0


def better_rate(
    draw: Draw, shift: float, settings: SprtSettings, runs: int, seed: int, max_sets: int = 400
) -> float:
    rng = random.Random(seed)
    better = 0
    for _ in range(runs):
        values = (shift + draw(rng) for _ in range(max_sets))
        better += sprt(values, settings, max_sets).verdict == BETTER
    return better / runs


@pytest.mark.parametrize("draw", [normal, lumpy])
@pytest.mark.parametrize("h1", [0.3, 1.0])
def test_no_true_difference_says_better_at_most_alpha(draw: Draw, h1: float) -> None:
    # 3000 runs: the rate's standard error at alpha 0.05 is 0.004, so 0.0625 is about three
    # of them above alpha and a twofold excess (0.10) would be ten above the threshold.
    settings = SprtSettings(0.0, h1)
    assert better_rate(draw, 0.0, settings, runs=3000, seed=21) <= settings.alpha * 1.25


@pytest.mark.parametrize("draw", [normal, lumpy])
def test_a_true_difference_of_h1_says_better_with_power_one_minus_beta(draw: Draw) -> None:
    settings = SprtSettings(0.0, 0.5)
    assert better_rate(draw, 0.5, settings, runs=600, seed=5) >= (1 - settings.beta) - 0.03


def test_a_clear_difference_says_better_quickly() -> None:
    settings = SprtSettings(0.0, 0.5)
    rng = random.Random(8)
    results = [sprt((1.5 + normal(rng) for _ in range(400)), settings, 400) for _ in range(200)]
    assert all(r.verdict == BETTER for r in results)
    assert all(r.last is not None and r.last.estimate.low > 0 for r in results)
    assert statistics.fmean(r.last.sets for r in results if r.last) < 20


def test_a_mean_far_beyond_h1_is_decided_as_fast_as_one_near_it() -> None:
    # Kill's rule bot leads its noisy copy by about 28 points with a spread of 2 a set:
    # without the peak, the ratio of two bad fits creeps up and takes ~160 sets.
    settings = SprtSettings(0.0, 0.5)
    rng = random.Random(3)
    for lead in (3.0, 28.0, 280.0):
        far = sprt((lead + 2 * normal(rng) for _ in range(400)), settings, 400)
        assert far.verdict == BETTER and far.last is not None and far.last.sets <= 40, lead
        below = sprt((-lead + 2 * normal(rng) for _ in range(400)), settings, 400)
        assert below.verdict == NOT_BETTER and below.last is not None, lead
        assert below.last.sets <= 40, lead
