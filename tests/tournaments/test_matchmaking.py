"""The ladder's matchmaking: tables never seat a bot twice, keep authors apart and the
in-flight cap, seat newcomers at once, spread meetings and sets as a balanced round robin
does (more where the order is dense), seat the least resolved pair at the top, and order a
seeded field of known strength."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from tournaments.matchmaking import (
    NEW_SETS,
    PROVISIONAL_SIGMA,
    RULES,
    Candidate,
    Rule,
    p_above,
    pair_key,
    pick_table,
    provisional,
    table_need,
)
from tournaments.ratings import Rating, SeatOutcome, TrueSkillSettings, apply_set, placements
from tournaments.schedule import rotations

SETTINGS = TrueSkillSettings()


def field(n: int, rng: random.Random, authors: int | None = None) -> list[Candidate]:
    """n bots with varied ratings and histories; `authors` spreads them over that many authors."""
    return [
        Candidate(
            bot_id=100 + b,
            mu=rng.gauss(25, 4),
            sigma=rng.uniform(0.8, 8.3),
            author=None if authors is None else f"author{b % authors}",
            sets_played=rng.randrange(0, 40),
            in_flight=0,
            last_played=rng.random(),
        )
        for b in range(n)
    ]


@pytest.mark.parametrize("rule", RULES)
def test_a_table_never_seats_a_bot_twice(rule: Rule) -> None:
    rng = random.Random(1)
    for trial in range(300):
        seats = 2 + trial % 4
        bots = field(seats + trial % 7, rng)
        table = pick_table(bots, seats, rng, rule)
        assert table is not None and len(table) == seats
        assert len(set(table)) == seats
        assert set(table) <= {c.bot_id for c in bots}


@pytest.mark.parametrize("rule", RULES)
def test_one_per_author_never_seats_two_bots_of_an_author(rule: Rule) -> None:
    rng = random.Random(2)
    for trial in range(300):
        seats = 3 + trial % 3
        bots = field(seats * 3 + trial % 11, rng, authors=seats + trial % 3)
        author_of = {c.bot_id: c.author for c in bots}
        table = pick_table(bots, seats, rng, rule, one_per_author=True)
        assert table is not None
        assert len({author_of[b] for b in table}) == seats


@pytest.mark.parametrize("rule", RULES)
def test_too_few_authors_or_bots_form_no_table(rule: Rule) -> None:
    rng = random.Random(3)
    assert pick_table(field(6, rng, authors=2), 3, rng, rule, one_per_author=True) is None
    assert pick_table(field(2, rng), 3, rng, rule) is None
    assert pick_table(field(6, rng, authors=2), 3, rng, rule) is not None  # authors may mix
    # bots with no author are each their own author
    alone = field(3, rng)
    assert sorted(pick_table(alone, 3, rng, rule, one_per_author=True) or ()) == [100, 101, 102]


@pytest.mark.parametrize("rule", RULES)
def test_the_in_flight_cap_keeps_busy_bots_out(rule: Rule) -> None:
    rng = random.Random(4)
    for _ in range(100):
        bots = field(10, rng)
        busy = set(rng.sample([c.bot_id for c in bots], 6))
        bots = [
            Candidate(c.bot_id, c.mu, c.sigma, c.author, c.sets_played, c.bot_id in busy)
            for c in bots
        ]
        table = pick_table(bots, 3, rng, rule)
        assert table is not None and not busy & set(table)
        # with a cap of 2, one set in flight is no bar
        assert pick_table(bots, 8, rng, rule, max_in_flight=2) is not None
    assert pick_table(bots, 5, rng, rule) is None  # only four idle bots


def test_a_new_bot_plays_at_the_very_next_pick() -> None:
    rng = random.Random(5)
    for trial in range(100):
        bots = [
            Candidate(b, rng.gauss(25, 3), rng.uniform(0.8, 2), None, rng.randrange(10, 90))
            for b in range(40)
        ]
        new = Candidate(99, 25.0, SETTINGS.sigma, None, 0)
        bots.insert(trial % 41, new)
        table = pick_table(bots, 3 + trial % 3, rng)
        assert table is not None and 99 in table


def test_picks_are_a_function_of_the_seed() -> None:
    bots = field(30, random.Random(6), authors=12)
    for rule in RULES:
        runs = []
        for _ in range(2):
            rng = random.Random(7)
            runs.append([pick_table(bots, 4, rng, rule, one_per_author=True) for _ in range(50)])
        assert runs[0] == runs[1]


def test_bad_arguments_are_refused() -> None:
    rng = random.Random(8)
    bots = field(5, rng)
    with pytest.raises(ValueError, match="^each bot may be a candidate once$"):
        pick_table([*bots, bots[0]], 3, rng)
    with pytest.raises(ValueError, match="^unknown rule 'elo': one of cardshark, nearest, random$"):
        pick_table(bots, 3, rng, "elo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seats"):
        pick_table(bots, 1, rng)
    with pytest.raises(ValueError, match="max_in_flight"):
        pick_table(bots, 3, rng, max_in_flight=0)


def test_provisional_while_sigma_is_above_the_threshold() -> None:
    assert provisional(SETTINGS.initial())
    assert provisional(Rating(30.0, PROVISIONAL_SIGMA + 0.01))
    assert not provisional(Rating(30.0, PROVISIONAL_SIGMA))
    assert not provisional(Rating(10.0, 3.0), threshold=3.5)


def test_need_is_highest_for_close_uncertain_neighbours() -> None:
    close = [Candidate(1, 25.0, 3.0), Candidate(2, 25.5, 3.0), Candidate(3, 26.0, 3.0)]
    apart = [Candidate(1, 10.0, 3.0), Candidate(2, 25.0, 3.0), Candidate(3, 40.0, 3.0)]
    sure = [Candidate(1, 25.0, 0.3), Candidate(2, 25.5, 0.3), Candidate(3, 26.0, 0.3)]
    assert table_need(close) > table_need(sure) > 0
    assert table_need(close) > table_need(apart)


def test_p_above_is_the_normal_cdf_of_the_mu_gap_over_the_joint_spread() -> None:
    strong, weak = Candidate(1, 27.0, 3.0), Candidate(2, 25.0, 4.0)
    # (27 - 25) / sqrt(3² + 4²) = 0.4, and Phi(0.4) = 0.6554217416...
    assert p_above(strong, weak) == pytest.approx(0.6554217416103242, rel=1e-12)
    assert p_above(weak, strong) == pytest.approx(1 - 0.6554217416103242, rel=1e-12)
    sure = [Candidate(3, 30.0, 0.0), Candidate(4, 20.0, 0.0), Candidate(5, 30.0, 0.0)]
    assert (p_above(sure[0], sure[1]), p_above(sure[1], sure[0])) == (1.0, 0.0)
    assert p_above(sure[0], sure[2]) == 0.5  # no spread and the same mu: a coin


def test_need_sums_entropy_times_the_share_a_match_removes_over_adjacent_pairs() -> None:
    # one pair: p = Phi(0.4), entropy 0.92918... bits, v = 25, beta 1: share 25/27
    pair = [Candidate(1, 27.0, 3.0), Candidate(2, 25.0, 4.0)]
    assert table_need(pair, beta=1.0) == pytest.approx(0.8603079167517981, rel=1e-12)
    # three bots in any order: only the neighbours in mu (10-25, 25-40) count, with beta 2
    apart = [Candidate(3, 40.0, 3.0), Candidate(1, 10.0, 3.0), Candidate(2, 25.0, 4.0)]
    assert table_need(apart, beta=2.0) == pytest.approx(0.02244646180056871, rel=1e-12)
    equal = [Candidate(1, 25.0, 2.0), Candidate(2, 25.0, 2.0)]
    assert table_need(equal, beta=2.0) == pytest.approx(0.5, rel=1e-12)  # 1 bit × 8 / 16
    settled = [Candidate(1, 25.0, 0.0), Candidate(2, 26.0, 0.0)]
    assert table_need(settled) == 0.0  # an order known for certain teaches nothing


def test_each_rule_picks_as_its_own() -> None:
    """A newcomer among 20 established bots: cardshark seats it at every pick, random and
    nearest do not; nearest seats bots close in mu, random anywhere."""
    established = [Candidate(b, float(b), 1.0, None, 50) for b in range(20)]
    newcomer = Candidate(99, 10.0, SETTINGS.sigma, None, 0)
    seated = {rule: 0 for rule in RULES}
    span = {rule: 0.0 for rule in RULES}
    for trial in range(60):
        for rule in RULES:
            table = pick_table([*established, newcomer], 3, random.Random(trial), rule)
            assert table is not None
            seated[rule] += 99 in table
            mus = [float(b) for b in table if b != 99]
            span[rule] += max(mus) - min(mus)
    assert seated["cardshark"] == 60
    assert seated["random"] < 20 and seated["nearest"] < 40, seated
    assert span["nearest"] < 0.6 * span["random"], span


def meetings_after(picks: int, use_meetings: bool) -> list[int]:
    """Sets each pair of a 9-bot field sat at together after `picks` cardshark balance picks
    (no top pairs), the meetings passed to the rule or not."""
    rng = random.Random(12)
    met: dict[tuple[int, int], int] = {}
    played = [5] * 9
    for _ in range(picks):
        bots = [Candidate(b, 25.0 + 0.1 * b, 1.0, None, played[b]) for b in range(9)]
        table = pick_table(bots, 3, rng, top_share=0.0, meetings=met if use_meetings else None)
        assert table is not None
        for a, b in itertools.combinations(table, 2):
            met[pair_key(a, b)] = met.get(pair_key(a, b), 0) + 1
        for b in table:
            played[b] += 1
    return [met.get(pair_key(a, b), 0) for a, b in itertools.combinations(range(9), 2)]


def test_with_meetings_every_pair_meets_about_equally_often() -> None:
    # 36 sets of 3 seat 108 pairs: 3 a pair on average
    met = meetings_after(36, use_meetings=True)
    assert min(met) >= 2 and max(met) <= 4, met
    blind = meetings_after(36, use_meetings=False)
    assert min(blind) == 0 and max(blind) >= 6, blind  # what the meetings are for


def test_pair_key_puts_the_smaller_id_first() -> None:
    assert pair_key(7, 3) == pair_key(3, 7) == (3, 7)


def test_the_balance_pick_seats_bots_where_the_order_is_dense() -> None:
    # ten bots within half a point of mu, ten spread over 40 points; all equally sure
    dense = [Candidate(b, 25.0 + 0.05 * b, 1.0, None, 10) for b in range(10)]
    sparse = [Candidate(10 + b, 4.0 * b, 1.0, None, 10) for b in range(10)]
    rng = random.Random(13)
    seated = [b for _ in range(200) for b in pick_table(dense + sparse, 3, rng) or ()]
    share = sum(b < 10 for b in seated) / len(seated)
    assert share > 0.8, share  # a random table would seat them half the time


def test_the_balance_pick_seats_the_least_sure_bots_first() -> None:
    rng = random.Random(14)
    for trial in range(50):
        sigmas = [1.0] * 12
        unsure = rng.sample(range(12), 3)
        for b in unsure:
            sigmas[b] = 3.0
        bots = [Candidate(b, 20.0 + b, sigmas[b], None, 10) for b in range(12)]
        table = pick_table(bots, 3, rng, top_share=0.0)
        assert table is not None and set(table) == set(unsure), trial


def test_a_top_pick_seats_the_least_resolved_pair_at_the_top() -> None:
    rng = random.Random(15)
    for trial in range(50):
        # the top six are well apart, but for one adjacent pair (trial % 5 moves it); below
        # them a dense, less sure stretch that a balance pick would seat instead
        at = trial % 5
        mus = [50.0 - 5 * r for r in range(6)] + [10.0 + 0.1 * b for b in range(6)]
        mus[at + 1] = mus[at] - 0.2
        sigmas = [0.5] * 6 + [1.0] * 6
        bots = [Candidate(b, mus[b], sigmas[b], None, 20) for b in range(12)]
        table = pick_table(bots, 3, rng, top_share=1.0)
        assert table is not None and {at, at + 1} <= set(table), (trial, table)
        assert set(pick_table(bots, 3, rng, top_share=0.0) or ()) <= set(range(6, 12))
    # further down the order an unresolved pair is not a top pick's
    mus = [50.0 - 5 * r for r in range(12)]
    mus[9] = mus[8] - 0.2
    bots = [Candidate(b, mus[b], 2.0 if b in (8, 9) else 0.5, None, 20) for b in range(12)]
    tops = [pick_table(bots, 3, rng, top_share=1.0) or () for _ in range(30)]
    assert all(len({0, 1, 2, 3, 4, 5} & set(t)) >= 2 for t in tops)


def test_a_balance_pick_seats_a_bot_never_met_before_one_met_once() -> None:
    # priority sigma × (bots within mu ± sigma): 9, 6, 3; 0 starts, 1 met it once, 2 never
    bots = [Candidate(b, 25.0, 3.0 - b, None, 10) for b in range(3)]
    for seed in range(20):
        table = pick_table(bots, 2, random.Random(seed), top_share=0.0, meetings={(0, 1): 1})
        assert table == (0, 2), seed
        assert pick_table(bots, 2, random.Random(seed), top_share=0.0) == (0, 1)


def test_when_the_pool_cannot_keep_authors_apart_the_field_fills_the_table() -> None:
    # the 12 surest-to-seat bots (dense, unsure) are all one author's: the pool of the
    # balance pick holds one seat's worth, the others come from the rest of the field
    one_author = [Candidate(b, 25.0 + 0.01 * b, 3.0, "a", 10) for b in range(13)]
    others = [Candidate(100 + b, 5.0 * b, 0.2, f"o{b}", 10) for b in range(4)]
    rng = random.Random(21)
    for _ in range(30):
        table = pick_table(one_author + others, 3, rng, one_per_author=True, top_share=0.0)
        assert table is not None and len(table) == 3
        assert sum(b < 100 for b in table) == 1, table


def test_a_field_larger_than_the_sample_is_picked_from_a_sample_of_it() -> None:
    rng = random.Random(22)
    bots = [Candidate(b, rng.gauss(25, 4), rng.uniform(0.5, 3), None, 20) for b in range(300)]
    seated = Counter(b for _ in range(100) for b in pick_table(bots, 3, rng, top_share=0.0) or ())
    assert sum(seated.values()) == 300
    # 64 of 300 scored at each pick: the tables vary (28 bots seated), where scoring all 300
    # at every pick would seat the same three (the ratings do not move here)
    assert len(seated) > 20, len(seated)


def test_a_bot_past_its_first_sets_is_no_longer_seated_first() -> None:
    rng = random.Random(23)
    settled = [Candidate(b, 25.0 + 0.1 * b, 2.0, None, 50) for b in range(20)]
    done = Candidate(99, 60.0, 0.5, None, NEW_SETS)  # its first sets played; far and sure
    tables = [pick_table([*settled, done], 3, rng, top_share=0.0) or () for _ in range(30)]
    assert not any(99 in t for t in tables)
    young = Candidate(99, 60.0, 0.5, None, NEW_SETS - 1)
    assert all(99 in (pick_table([*settled, young], 3, rng) or ()) for _ in range(30))


def test_a_top_pair_of_one_author_is_seated_unless_authors_are_kept_apart() -> None:
    rng = random.Random(24)
    mus = [50.0, 49.8, 40.0, 35.0, 34.7, 25.0] + [10.0 + 0.1 * b for b in range(6)]
    authors = ["x", "x", "y", "z", "w", "v"] + [f"u{b}" for b in range(6)]
    bots = [Candidate(b, mus[b], 0.5, authors[b], 20) for b in range(12)]
    # 0 and 1 are the least resolved pair at the top, and one author's
    for _ in range(20):
        assert {0, 1} <= set(pick_table(bots, 3, rng, top_share=1.0) or ())
        # kept apart, the next least resolved pair (3, 4) is the top pick's
        table = pick_table(bots, 3, rng, one_per_author=True, top_share=1.0)
        assert table is not None and {3, 4} <= set(table), table


def test_a_top_pick_weighs_pairs_by_the_games_beta() -> None:
    # (0, 1): nearly a coin but sure (sigma 0.3); (2, 3): clearer but unsure (sigma 3). With
    # the rating's beta one match can move the sure pair little, so (2, 3) is the top pick's;
    # with a tiny beta it can settle either, and the closer order (0, 1) is.
    mus = [50.0, 49.9, 45.0, 41.0, 30.0, 20.0] + [5.0 + 0.1 * b for b in range(6)]
    sigmas = [0.3, 0.3, 3.0, 3.0, 0.3, 0.3] + [1.0] * 6
    bots = [Candidate(b, mus[b], sigmas[b], None, 20) for b in range(12)]
    rng = random.Random(25)
    for _ in range(10):
        assert {2, 3} <= set(pick_table(bots, 3, rng, top_share=1.0) or ())
        assert {0, 1} <= set(pick_table(bots, 3, rng, top_share=1.0, beta=0.1) or ())


def test_a_top_pick_with_no_pair_to_seat_leaves_the_table_to_the_balance_pick() -> None:
    # the top six are one author's: kept apart, no top pair can sit together
    bots = [Candidate(b, 50.0 - b, 0.5, "top" if b < 6 else f"a{b}", 20) for b in range(12)]
    rng = random.Random(26)
    for _ in range(10):
        table = pick_table(bots, 3, rng, one_per_author=True, top_share=1.0)
        assert table is not None and sum(b < 6 for b in table) <= 1, table


def test_random_tables_keep_authors_apart_where_draws_alone_fail() -> None:
    # 200 bots of one author and two of their own: random draws rarely find both loners,
    # so the table is completed from a shuffle of the whole field
    bots = [Candidate(b, 25.0, 1.0, "crowd", 10) for b in range(200)]
    bots += [Candidate(500, 25.0, 1.0, "loner1", 10), Candidate(501, 25.0, 1.0, "loner2", 10)]
    rng = random.Random(30)
    for _ in range(20):
        table = pick_table(bots, 3, rng, "random", one_per_author=True)
        assert table is not None and {500, 501} < set(table), table


def test_nearest_picks_what_halites_rule_picks() -> None:
    """Pinned picks of `nearest` (Halite III's coordinator, docs/ladder.md): its constants,
    the seed bot's three draws and the widening of k when authors must be kept apart."""
    rng = random.Random(31)
    bots = [
        Candidate(b, rng.gauss(25, 5), rng.uniform(0.5, 3), None,
                  rng.choice([0, 5, 50, 399, 400, 900]), 0, rng.random())
        for b in range(40)
    ]  # fmt: skip
    rng = random.Random(32)
    assert [pick_table(bots, 3, rng, "nearest") for _ in range(12)] == [
        (9, 34, 2), (36, 10, 13), (12, 24, 36), (21, 14, 38), (34, 3, 17), (12, 9, 13),
        (22, 32, 27), (28, 37, 30), (39, 8, 33), (36, 20, 37), (8, 18, 37), (9, 13, 25),
    ]  # fmt: skip
    # eight bots an author, in mu order: the nearest are mostly the seed's own author's
    rng = random.Random(33)
    bots = [Candidate(b, 2.0 * b, 1.0, f"a{b // 8}", 50, 0, rng.random()) for b in range(40)]
    rng = random.Random(34)
    assert [pick_table(bots, 3, rng, "nearest", one_per_author=True) for _ in range(12)] == [
        (33, 31, 19), (8, 24, 17), (21, 27, 15), (31, 39, 23), (38, 30, 20), (38, 24, 21),
        (23, 33, 13), (22, 29, 32), (29, 23, 33), (38, 22, 27), (19, 26, 12), (33, 31, 17),
    ]  # fmt: skip


# A seeded field of house-like bots of known strength: bot b's expected score is -GAP * b, a
# seat's deal luck is shared by its set's rotations (duplicate deals) and each match adds noise.
GAP = 0.5
DEAL_SD = 2.0
MATCH_SD = 5.0
Picker = Callable[[list[Candidate], random.Random], Sequence[int] | None]


def ladder_rho(picker: Picker, n: int = 12, seats: int = 3, picks: int = 150) -> float:
    """Spearman's rho of the mu order with the true order after `picks` simulated sets."""
    sim = random.Random(10)
    rng = random.Random(11)
    ratings = {b: SETTINGS.initial() for b in range(n)}
    played = [0] * n
    for _ in range(picks):
        bots = [Candidate(b, ratings[b].mu, ratings[b].sigma, None, played[b]) for b in range(n)]
        table = picker(bots, rng)
        assert table is not None
        deal = [sim.gauss(0, DEAL_SD) for _ in table]
        matches = []
        for order in rotations(table):
            scores = [-GAP * b + deal[p] + sim.gauss(0, MATCH_SD) for p, b in enumerate(order)]
            matches.append((order, placements([SeatOutcome(round(s)) for s in scores])))
        for change in apply_set(SETTINGS, ratings, matches):
            ratings[change.bot_id] = change.after
            played[change.bot_id] += 1
    tiebreak = rng.sample(range(n), n)  # equal mus (bots never played) in no helpful order
    ranking = sorted(range(n), key=lambda b: (-ratings[b].mu, tiebreak[b]))
    d2 = sum((i - b) ** 2 for i, b in enumerate(ranking))
    return 1 - 6 * d2 / (n * (n * n - 1))


@pytest.mark.parametrize("rule", RULES)
def test_a_ladder_orders_a_field_of_known_strength(rule: Rule) -> None:
    assert ladder_rho(lambda bots, rng: pick_table(bots, 3, rng, rule)) > 0.9


GROUPS = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)]


@pytest.mark.parametrize(
    "broken",
    [
        lambda bots, rng: (0, 5, 11),  # always the same table
        lambda bots, rng: GROUPS[rng.randrange(4)],  # groups that never meet
    ],
    ids=["one table", "closed groups"],
)
def test_the_field_test_fails_a_broken_rule(broken: Picker) -> None:
    assert ladder_rho(broken) < 0.5
