"""Ratings: TrueSkill reference numbers, placements with ties and forfeits, settings."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trueskill

from tournaments.errors import ResultError
from tournaments.ratings import (
    Rating,
    SeatOutcome,
    TrueSkillSettings,
    apply_match,
    apply_set,
    placements,
    rate_match,
)

DEFAULT = TrueSkillSettings()
START = DEFAULT.initial()


def test_defaults_are_the_trueskill_package_defaults() -> None:
    package = trueskill.TrueSkill()
    ours = (DEFAULT.mu, DEFAULT.sigma, DEFAULT.beta, DEFAULT.tau, DEFAULT.draw_probability)
    assert ours == (package.mu, package.sigma, package.beta, package.tau, 0.10)
    assert ours == pytest.approx((25.0, 25 / 3, 25 / 6, 25 / 300, 0.10))


def test_two_player_reference_numbers() -> None:
    winner, loser = rate_match(DEFAULT, [START, START], [1, 2])
    assert winner.mu == pytest.approx(29.396, abs=1e-3)
    assert winner.sigma == pytest.approx(7.171, abs=1e-3)
    assert loser.mu == pytest.approx(20.604, abs=1e-3)
    assert loser.sigma == pytest.approx(7.171, abs=1e-3)


def test_three_player_free_for_all_reference_numbers() -> None:
    first, second, third = rate_match(DEFAULT, [START] * 3, [1, 2, 3])
    assert (first.mu, first.sigma) == pytest.approx((31.675, 6.656), abs=1e-3)
    assert (second.mu, second.sigma) == pytest.approx((25.000, 6.208), abs=1e-3)
    assert (third.mu, third.sigma) == pytest.approx((18.325, 6.656), abs=1e-3)


def test_two_player_draw_leaves_means_and_shrinks_sigma() -> None:
    a, b = rate_match(DEFAULT, [START, START], [1, 1])
    assert a.mu == pytest.approx(25.0) and b.mu == pytest.approx(25.0)
    assert a.sigma == pytest.approx(6.458, abs=1e-3)


def test_settings_change_the_numbers_and_never_touch_the_global_environment() -> None:
    trueskill.setup(mu=100.0, sigma=1.0, beta=0.5, tau=0.0, draw_probability=0.5)
    try:
        winner, _ = rate_match(DEFAULT, [START, START], [1, 2])
        assert winner.mu == pytest.approx(29.396, abs=1e-3)
    finally:
        trueskill.setup()
    wide = TrueSkillSettings(beta=10.0)
    assert rate_match(wide, [START, START], [1, 2])[0].mu != winner.mu
    assert DEFAULT.environment() is DEFAULT.environment()
    assert DEFAULT.environment() is not trueskill.global_env()


def test_the_environment_adds_no_drift_within_a_tournament() -> None:
    settings = TrueSkillSettings(tau=2.0)
    assert settings.environment().tau == 0.0
    a, b = rate_match(settings, [START, START], [1, 1])
    plain = trueskill.TrueSkill(tau=0.0, draw_probability=0.10, backend=None)
    x, y = plain.rate([(plain.create_rating(),), (plain.create_rating(),)], ranks=[1, 1])
    assert (a.mu, a.sigma) == (x[0].mu, x[0].sigma)


def test_placements_rank_by_score_and_share_ties() -> None:
    assert placements([SeatOutcome(10), SeatOutcome(30), SeatOutcome(20)]) == (3, 1, 2)
    assert placements([SeatOutcome(5), SeatOutcome(5), SeatOutcome(1)]) == (1, 1, 3)
    assert placements([SeatOutcome(-2.5), SeatOutcome(-2.5)]) == (1, 1)


def test_forfeited_seats_rank_below_every_other_seat() -> None:
    outcomes = [
        SeatOutcome(100, faults=3, forfeited=True),
        SeatOutcome(-50),
        SeatOutcome(10),
        SeatOutcome(40, forfeited=True),
        SeatOutcome(40, forfeited=True),
    ]
    assert placements(outcomes) == (3, 2, 1, 4, 4)


def test_a_forfeit_costs_rating_even_with_the_best_score() -> None:
    outcomes = [SeatOutcome(99, forfeited=True), SeatOutcome(0), SeatOutcome(1)]
    changes = apply_match(DEFAULT, {}, [7, 8, 9], placements(outcomes))
    by_bot = {c.bot_id: c.after for c in changes}
    assert by_bot[7].mu < by_bot[8].mu < by_bot[9].mu
    assert [c.before for c in changes] == [START] * 3


def test_apply_match_starts_unknown_bots_at_the_settings_initial_rating() -> None:
    known = Rating(30.0, 2.0)
    settings = TrueSkillSettings(mu=1000.0, sigma=100.0, beta=50.0, tau=1.0)
    changes = apply_match(settings, {1: known}, [1, 2], [2, 1])
    assert changes[0].before == known
    assert changes[1].before == Rating(1000.0, 100.0)
    # an expected loss moves the known bot's mu by less than a float's last bit
    assert changes[0].after.mu <= 30.0 and changes[1].after.mu > 1000.0 - 1e-9


def test_bad_inputs_raise_with_a_message_that_names_the_bad_value() -> None:
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: apply_match(DEFAULT, {}, [1, 1], [1, 2]), "two seats of one rated match: [1, 1]"),
        (
            lambda: apply_set(DEFAULT, {}, [([4, 4], [1, 2])]),
            "two seats of one rated match: [4, 4]",
        ),
        (lambda: apply_set(DEFAULT, {}, []), "a rated set needs at least one match"),
        (lambda: rate_match(DEFAULT, [START], [1]), "at least 2 seats and one rank per seat"),
        (lambda: rate_match(DEFAULT, [START] * 2, [1]), "(got 2 ratings, 1 ranks)"),
        (lambda: SeatOutcome(float("nan")), "score must be a finite number, not nan"),
        (lambda: SeatOutcome(1, faults=-1), "faults must be a count >= 0, not -1"),
        (lambda: SeatOutcome(1, faults=True), "faults must be a count >= 0, not True"),
        (
            lambda: TrueSkillSettings(mu=float("inf")),
            "TrueSkill mu must be a finite number, not inf",
        ),
        (lambda: TrueSkillSettings(beta="4"), "TrueSkill beta must be a finite number, not '4'"),  # type: ignore[arg-type]
        (lambda: TrueSkillSettings(sigma=0), "sigma > 0, beta > 0 and tau >= 0 (got sigma=0,"),
        (lambda: TrueSkillSettings(beta=0), "(got sigma=8.333333333333334, beta=0, tau="),
        (lambda: TrueSkillSettings(tau=-0.1), "beta=4.166666666666667, tau=-0.1)"),
        (
            lambda: TrueSkillSettings(draw_probability=1.0),
            "draw_probability must be in [0, 1), not 1.0",
        ),
        (lambda: TrueSkillSettings(draw_probability=-0.1), "not -0.1"),
    ]
    for call, message in cases:
        with pytest.raises(ResultError) as caught:
            call()
        assert message in str(caught.value), (message, str(caught.value))


def test_the_edges_of_the_settings_are_allowed() -> None:
    for settings in (
        TrueSkillSettings(sigma=0.5, beta=0.5, tau=0.0, draw_probability=0.0),
        TrueSkillSettings(mu=-3, sigma=1e-3, beta=1e-3),
    ):
        assert settings.initial() == Rating(settings.mu, settings.sigma)
    assert SeatOutcome(-5, faults=0).faults == 0


def test_conservative_is_mu_minus_three_sigma() -> None:
    assert Rating(25.0, 25 / 3).conservative == pytest.approx(0.0)
    assert Rating(30.0, 2.0).conservative == 24.0
