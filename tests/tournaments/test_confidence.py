"""P(A ranks above B) from per-set differences: Student's t distribution function against
numerical integration, hand-made numbers, the standings' neighbours of a stored tournament,
and seeded simulations of the cross-table interval's coverage and of P(above)'s calibration."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from statistics import fmean
from typing import Any

import pytest

from tournaments.confidence import ConfidenceGoal, p_above, t_cdf
from tournaments.db import upgrade_schema
from tournaments.errors import ScheduleError, SchemaOutdatedError
from tournaments.ratings import SeatOutcome
from tournaments.standings import estimate, summarise, unresolved
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
    assert [(n.difference.n, n.p_above) for n in before.neighbours] == [(0, None), (0, None)]
    assert len(unresolved(before, ConfidenceGoal(0.9))) == 2
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


# -- the goal and appended rounds -------------------------------------------------------------


def test_the_goal_threshold_corrects_for_both_orders_and_every_round() -> None:
    goal = ConfidenceGoal(0.95, max_rounds=20)
    assert goal.threshold == pytest.approx(1 - 0.05 / 40, abs=1e-15)
    assert goal.separates(0.99875) and not goal.separates(0.9987) and not goal.separates(None)
    assert ConfidenceGoal(0.9, max_rounds=1).threshold == pytest.approx(0.95, abs=1e-15)
    for bad in (0.5, 1.0, 0.2):
        with pytest.raises(ValueError, match="confidence"):
            ConfidenceGoal(bad)
    with pytest.raises(ValueError, match="max rounds"):
        ConfidenceGoal(0.9, max_rounds=0)


def test_equal_bots_are_separated_at_some_round_at_most_one_minus_p_of_the_time() -> None:
    # The goal's promise, simulated: two bots of equal strength, 2 sets a round, looked at
    # after every round up to max_rounds; "separated" at any look is a false verdict.
    goal = ConfidenceGoal(0.9, max_rounds=10)
    rng = random.Random(9)
    false = naive = 0
    for _ in range(REPLICATIONS):
        values: list[float] = []
        ever = ever_naive = False
        for _ in range(goal.max_rounds):
            values += [set_value(rng, 0.0, 3, normal) for _ in range(2)]
            p = p_above(values) or 0.5
            top = max(p, 1 - p)  # whichever bot the standings put first
            ever = ever or goal.separates(top)
            ever_naive = ever_naive or top >= goal.confidence
        false += ever
        naive += ever_naive
    assert false / REPLICATIONS <= 1 - goal.confidence
    assert naive / REPLICATIONS > 2 * (1 - goal.confidence)  # why the correction is needed


def schedule_rows(
    store: Store, tournament_id: int
) -> list[tuple[int, int, int, int, int, tuple[int, ...]]]:
    return [
        (m.schedule_index, m.round, m.table_index, m.rotation, m.seed, tuple(m.seats))
        for m in store.matches(tournament_id)
    ]


@pytest.mark.parametrize(
    ("bots", "kwargs"),
    [
        (3, {}),
        (5, {"tables": 4}),
        (4, {"format": "gauntlet"}),
    ],
)
def test_appended_rounds_are_the_rounds_a_longer_tournament_would_have(
    store: Store, bots: int, kwargs: dict[str, Any]
) -> None:
    names = [f"b{i}" for i in range(bots)]
    for name in names:
        store.add_bot(name)
    grown = store.create_tournament("knaves", names, seed=21, **kwargs)
    whole = store.create_tournament("knaves", names, seed=21, rounds=3, **kwargs)
    assert grown.id is not None and whole.id is not None
    assert [store.add_round(grown.id), store.add_round(grown.id)] == [1, 2]
    assert schedule_rows(store, grown.id) == schedule_rows(store, whole.id)
    assert store.get_tournament(grown.id).rounds == 3
    assert len({row[4] for row in schedule_rows(store, grown.id)}) == 3 * len(
        {(r[1], r[2]) for r in schedule_rows(store, grown.id) if r[1] == 0}
    )


def test_a_finished_tournament_runs_again_with_a_new_round(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["a", "b", "c"], seed=2)
    assert t.id is not None
    for match in store.pending_matches(t.id):
        assert match.id is not None
        store.record_result(match.id, [SeatOutcome(float(seat)) for seat in range(3)])
    assert store.get_tournament(t.id).status == "finished"
    assert store.add_round(t.id) == 1
    assert store.get_tournament(t.id).status == "running"
    assert [m.round for m in store.pending_matches(t.id)] == [1] * 6


def test_a_tournament_with_a_goal_is_not_finished_by_its_last_scheduled_match(
    store: Store,
) -> None:
    """Its verdict finishes it: killed before the next round, it stays resumable."""
    for name in ("a", "b", "c"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["a", "b", "c"], seed=2)
    assert t.id is not None
    store.set_goal(t.id, ConfidenceGoal(0.9, 5))
    for match in store.pending_matches(t.id):
        assert match.id is not None
        store.start_match(match.id)  # as the runner does
        store.record_result(match.id, [SeatOutcome(float(seat)) for seat in range(3)])
    assert store.get_tournament(t.id).status == "running"


def test_the_goal_is_stored_in_its_own_table(store: Store, db_url: str) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["a", "b", "c"], seed=2, rounds=2)
    assert t.id is not None
    assert store.goal(t.id) is None
    store.set_goal(t.id, ConfidenceGoal(0.9, 7))
    assert store.goal(t.id) == ConfidenceGoal(0.9, 7)
    store.set_goal(t.id, ConfidenceGoal(0.99, 5))
    assert store.goal(t.id) == ConfidenceGoal(0.99, 5)
    with pytest.raises(ScheduleError, match="below the 2 rounds"):
        store.set_goal(t.id, ConfidenceGoal(0.9, 1))


def test_a_database_from_before_goals_gains_their_table(store: Store, db_url: str) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["a", "b", "c"], seed=2)
    assert t.id is not None
    with store.engine.begin() as connection:  # as written before goals and before Alembic
        for later in ("tournament_goals", "staged_results", "alembic_version"):
            connection.exec_driver_sql(f"DROP TABLE {later}")
        connection.exec_driver_sql("DROP INDEX ix_matches_set")
    store.close()
    with pytest.raises(SchemaOutdatedError):  # refused until upgraded, never half-opened
        Store(db_url)
    upgrade_schema(db_url)
    with Store(db_url) as reopened:
        assert reopened.goal(t.id) is None
        reopened.set_goal(t.id, ConfidenceGoal(0.95, 3))
        assert reopened.goal(t.id) == ConfidenceGoal(0.95, 3)
        assert reopened.get_tournament(t.id).rounds == 1


def test_a_goal_may_end_at_the_rounds_scheduled_and_appended_rounds_start_fresh(
    store: Store,
) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name)
    t = store.create_tournament("knaves", ["a", "b", "c"], seed=2, rounds=2)
    assert t.id is not None
    store.set_goal(t.id, ConfidenceGoal(0.95, 2))  # no round more than scheduled: allowed
    assert store.goal(t.id) == ConfidenceGoal(0.95, 2)
    store.add_round(t.id)
    added = [m for m in store.matches(t.id) if m.round == 2]
    assert len(added) == 6
    assert {(m.attempt, m.status, m.result) for m in added} == {(0, "pending", None)}
