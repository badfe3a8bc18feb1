"""The score-margin model (the bench's baseline beside TrueSkill): margins, no drift, forfeits."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from tournaments.margins import apply_margins as apply_set
from tournaments.margins import rate_margins as rate_set
from tournaments.margins import set_scores
from tournaments.ratings import Rating, SeatOutcome, TrueSkillSettings, placements

DEFAULT = TrueSkillSettings()


def skill_set(
    rng: random.Random, skills: dict[int, float], table: tuple[int, ...]
) -> list[tuple[list[int], list[SeatOutcome]]]:
    """One deal played in every rotation: seat luck, deal luck and each bot's skill."""
    seat_luck = [rng.gauss(0, 4) for _ in table]
    played = []
    for r in range(len(table)):
        seats = [table[(r + s) % len(table)] for s in range(len(table))]
        scores = [15 + seat_luck[s] + skills[b] + rng.gauss(0, 3) for s, b in enumerate(seats)]
        played.append((seats, [SeatOutcome(x) for x in scores]))
    return played


def test_sigma_keeps_shrinking_with_sets_and_has_no_floor() -> None:
    rng = random.Random(11)
    skills = {1: 0.0, 2: 0.5, 3: 1.0}
    current: dict[int, Rating] = {}
    sigmas = [DEFAULT.sigma]
    for _ in range(400):
        bots, scores = set_scores(skill_set(rng, skills, (1, 2, 3)))
        for change in apply_set(DEFAULT, current, bots, scores, 3):
            current[change.bot_id] = change.after
        sigmas.append(current[1].sigma)
    assert all(later < earlier for earlier, later in itertools.pairwise(sigmas))
    assert sigmas[-1] < sigmas[100] / 1.9  # 1/sqrt(n): four times the sets, half the sigma


def test_a_seeded_field_of_known_order_is_ordered_right() -> None:
    skills = {10: 1.8, 11: 1.2, 12: 0.6, 13: 0.0}
    truth = sorted(skills, key=lambda b: -skills[b])
    right = 0
    for seed in range(40):
        rng = random.Random(seed)
        current: dict[int, Rating] = {}
        for _ in range(24):  # 24 round robins: 96 sets, 288 matches
            for table in itertools.combinations(sorted(skills), 3):
                bots, scores = set_scores(skill_set(rng, skills, table))
                for change in apply_set(DEFAULT, current, bots, scores, 3):
                    current[change.bot_id] = change.after
        right += sorted(current, key=lambda b: -current[b].mu) == truth
    # 0.88 over 200 seeds; ordering by raw mean score gets 0.84 (it ignores table-mates)
    assert right >= 32, f"exact order in only {right} of 40 seeded fields"


def test_only_margins_move_ratings_and_a_shift_of_every_score_changes_nothing() -> None:
    start = [DEFAULT.initial()] * 3
    base = rate_set(DEFAULT, start, [5.0, 3.0, 1.0], 3)
    shifted = rate_set(DEFAULT, start, [105.0, 103.0, 101.0], 3)
    assert [r.mu for r in base] == pytest.approx([r.mu for r in shifted], abs=1e-9)
    assert base[0].mu > 25.0 > base[2].mu
    assert base[1].mu == pytest.approx(25.0)
    bigger = rate_set(DEFAULT, start, [9.0, 3.0, -3.0], 3)
    assert bigger[0].mu - bigger[2].mu > base[0].mu - base[2].mu  # margins count
    tie = rate_set(DEFAULT, start, [4.0, 4.0, 4.0], 3)
    assert [r.mu for r in tie] == pytest.approx([25.0] * 3)
    assert all(r.sigma < DEFAULT.sigma for r in tie)


def test_a_forfeit_scores_at_most_the_lowest_seat_that_played_on() -> None:
    played = [
        ([1, 2, 3], [SeatOutcome(30, forfeited=True), SeatOutcome(10), SeatOutcome(4)]),
        ([2, 3, 1], [SeatOutcome(8), SeatOutcome(6), SeatOutcome(-2)]),
        (
            [3, 1, 2],
            [SeatOutcome(1, forfeited=True), SeatOutcome(7, forfeited=True), SeatOutcome(2)],
        ),
    ]
    bots, scores = set_scores(played)
    assert bots == [1, 2, 3]
    # bot 1: 30 -> 4, -2, 7 -> 2; bot 3 keeps its own 1, already below bot 2's 2
    assert scores == pytest.approx([(4 - 2 + 2) / 3, (10 + 8 + 2) / 3, (4 + 6 + 1) / 3])
    everyone = [([1, 2], [SeatOutcome(5, forfeited=True), SeatOutcome(3, forfeited=True)])]
    assert set_scores(everyone) == ([1, 2], [5.0, 3.0])


def test_widening_between_tournaments_only_for_carried_bots() -> None:
    settings = TrueSkillSettings(tau=1.0)
    known = Rating(27.0, 0.5)
    plain = apply_set(settings, {1: known, 2: known}, [1, 2], [3.0, 1.0], 2)
    carried = apply_set(settings, {1: known, 2: known}, [1, 2], [3.0, 1.0], 2, carried={1})
    assert plain[0].before == carried[0].before == known  # history keeps the stored rating
    assert carried[0].after.mu - known.mu > plain[0].after.mu - known.mu
    assert carried[0].after.sigma > plain[0].after.sigma
    assert carried[1].before == plain[1].before == known


def test_rating_order_matches_placements_on_a_single_decisive_set() -> None:
    outcomes = [SeatOutcome(10), SeatOutcome(5), SeatOutcome(0)]
    played = [
        ([1, 2, 3], outcomes),
        ([2, 3, 1], [SeatOutcome(5)] * 3),
        ([3, 1, 2], [SeatOutcome(5)] * 3),
    ]
    bots, scores = set_scores(played)
    after = apply_set(DEFAULT, {}, bots, scores, 3)
    by_mu = sorted(after, key=lambda c: -c.after.mu)
    ranks = placements(outcomes)
    assert [c.bot_id for c in by_mu] == [b for _, b in sorted(zip(ranks, [1, 2, 3], strict=True))]
    assert math.isclose(sum(c.after.mu for c in after), 3 * DEFAULT.mu, rel_tol=1e-12)
