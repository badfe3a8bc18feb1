"""Schedules: tables, rotations, seat balance and seeds of the duplicate round robin."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest

from tournaments.errors import NotEnoughEntrantsError, ScheduleError, TableCountError
from tournaments.schedule import (
    ScheduledMatch,
    balanced_tables,
    min_covering_tables,
    rotations,
    round_robin,
    schedule_size,
    seatings_per_table,
)

CASES = [(k, n) for n in (3, 5) for k in range(5, 9)]


def bot_ids(k: int) -> list[int]:
    return [100 + 7 * i for i in range(k)]  # ids that are not positions


def by_table(schedule: list[ScheduledMatch]) -> dict[tuple[int, int], list[ScheduledMatch]]:
    groups: dict[tuple[int, int], list[ScheduledMatch]] = defaultdict(list)
    for m in schedule:
        groups[(m.round, m.table)].append(m)
    return groups


def seat_counts(schedule: list[ScheduledMatch]) -> Counter[tuple[int, int]]:
    return Counter((bot, seat) for m in schedule for seat, bot in enumerate(m.seats))


def check_duplicate_structure(schedule: list[ScheduledMatch], n: int, rounds: int) -> None:
    assert [m.index for m in schedule] == list(range(len(schedule)))
    groups = by_table(schedule)
    for (_, _), matches in groups.items():
        # one seed per table, every rotation of the seating in both directions
        assert len({m.seed for m in matches}) == 1
        assert [m.rotation for m in matches] == list(range(seatings_per_table(n)))
        assert [m.seats for m in matches] == rotations(matches[0].seats)
        assert len(set(matches[0].seats)) == n
    seeds = [ms[0].seed for ms in groups.values()]
    assert len(seeds) == len(set(seeds)), "seeds repeat across tables or rounds"
    assert {m.round for m in schedule} == set(range(rounds))


@pytest.mark.parametrize(("k", "n"), CASES)
def test_all_combinations_every_table_every_rotation_every_seat(k: int, n: int) -> None:
    ids = bot_ids(k)
    rounds = 2
    schedule = round_robin(ids, n, seed=11, rounds=rounds)
    assert len(schedule) == math.comb(k, n) * 2 * n * rounds == schedule_size(k, n, rounds)
    check_duplicate_structure(schedule, n, rounds)
    for r in range(rounds):
        tables = {frozenset(m.seats) for m in schedule if m.round == r}
        assert tables == {frozenset(c) for c in itertools.combinations(ids, n)}
    # each bot sits in each seat exactly twice C(k-1, n-1) times per round
    expected = 2 * math.comb(k - 1, n - 1) * rounds
    counts = seat_counts(schedule)
    assert counts == Counter({(b, s): expected for b in ids for s in range(n)})


@pytest.mark.parametrize(("k", "n"), CASES)
def test_balanced_tables_every_pair_meets_and_seats_are_even(k: int, n: int) -> None:
    ids = bot_ids(k)
    total = math.comb(k, n)
    lower = min_covering_tables(k, n)
    choices = [t for t in range(lower, lower + 3) if t < total] or [total]
    for tables in choices:
        schedule = round_robin(ids, n, seed=5, rounds=2, tables=tables)
        assert len(schedule) == tables * 2 * n * 2 == schedule_size(k, n, 2, tables)
        check_duplicate_structure(schedule, n, 2)
        for r in range(2):
            layout = {frozenset(m.seats) for m in schedule if m.round == r}
            assert len(layout) == tables, "tables must be distinct"
            met = {frozenset(p) for t in layout for p in itertools.combinations(t, 2)}
            assert met == {frozenset(p) for p in itertools.combinations(ids, 2)}, (k, n, r)
        counts = seat_counts(schedule)
        for seat in range(n):
            per_bot = [counts[(b, seat)] for b in ids]
            # one table more is two more matches in each seat (a set seats a bot there twice)
            assert max(per_bot) - min(per_bot) <= 2, (k, n, tables, seat, per_bot)
        for b in ids:
            assert len({counts[(b, s)] for s in range(n)}) == 1, "a bot's seats are uneven"


def test_balanced_with_all_tables_is_all_combinations() -> None:
    assert balanced_tables(6, 3, 20, seed=1) == list(itertools.combinations(range(6), 3))


def test_fano_plane_is_found_for_seven_bots_at_seven_three_seat_tables() -> None:
    tables = balanced_tables(7, 3, 7, seed=3)
    pairs = Counter(frozenset(p) for t in tables for p in itertools.combinations(t, 2))
    assert len(pairs) == 21 and set(pairs.values()) == {1}


@pytest.mark.parametrize(("k", "n", "tables"), [(6, 3, 5), (8, 5, 3), (6, 3, 21), (5, 3, 0)])
def test_impossible_table_counts_raise(k: int, n: int, tables: int) -> None:
    with pytest.raises(TableCountError, match=f"tables={tables} for {k} entrants"):
        round_robin(bot_ids(k), n, seed=1, tables=tables)


@pytest.mark.parametrize(("k", "n"), [(2, 3), (4, 5), (0, 3), (1, 2)])
def test_fewer_entrants_than_seats_raises_naming_the_counts(k: int, n: int) -> None:
    with pytest.raises(NotEnoughEntrantsError) as caught:
        round_robin(bot_ids(k), n, seed=1)
    assert caught.value.entrants == k and caught.value.seats == n
    assert f"{k} entrant" in str(caught.value) and f"{n} seats" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_exactly_as_many_entrants_as_seats_is_one_table() -> None:
    schedule = round_robin([1, 2, 3], 3, seed=9, rounds=3)
    assert len(schedule) == 18
    check_duplicate_structure(schedule, 3, 3)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ScheduleError, match="repeated bot ids: \\[2\\]"):
        round_robin([1, 2, 2, 3], 3, seed=1)
    with pytest.raises(ScheduleError, match="rounds"):
        round_robin([1, 2, 3], 3, seed=1, rounds=0)
    with pytest.raises(ScheduleError, match="2 seats"):
        round_robin([1, 2, 3], 1, seed=1)


def test_schedules_are_pure_functions_of_their_inputs() -> None:
    ids = bot_ids(7)
    assert round_robin(ids, 3, seed=42, tables=9) == round_robin(ids, 3, seed=42, tables=9)
    a = round_robin(ids, 3, seed=42)
    b = round_robin(ids, 3, seed=43)
    assert [m.seats for m in a] == [m.seats for m in b]
    assert {m.seed for m in a}.isdisjoint({m.seed for m in b})
    # the balanced search does not shift the seed stream
    assert [m.seed for m in round_robin(ids, 3, seed=42, tables=9)][:3] == [m.seed for m in a][:3]
    assert all(0 <= m.seed < 2**53 for m in a)


@pytest.mark.parametrize(("entrants", "seats"), [(5, 3), (6, 3), (6, 5), (8, 5)])
def test_gauntlet_puts_the_challenger_at_every_table_in_every_seat(
    entrants: int, seats: int
) -> None:
    from tournaments.schedule import gauntlet

    ids = list(range(100, 100 + entrants))
    schedule = gauntlet(ids, seats, seed=3, rounds=2)
    assert len(schedule) == 2 * math.comb(entrants - 1, seats - 1) * 2 * seats
    assert [m.index for m in schedule] == list(range(len(schedule)))
    assert all(ids[0] in m.seats for m in schedule)
    seat_counts = Counter(m.seats.index(ids[0]) for m in schedule)
    assert len(set(seat_counts.values())) == 1 and len(seat_counts) == seats
    fields = Counter(frozenset(m.seats) - {ids[0]} for m in schedule if m.rotation == 0)
    assert set(fields.values()) == {2}
    assert len(fields) == math.comb(entrants - 1, seats - 1)
    by_table = {}
    for m in schedule:
        by_table.setdefault((m.round, m.table), set()).add(m.seed)
    assert all(len(s) == 1 for s in by_table.values())
    assert len({next(iter(s)) for s in by_table.values()}) == len(by_table)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_a_set_seats_every_bot_just_after_every_other_equally_often(n: int) -> None:
    # In trick games the player after you sees your card: a set must not favour either of
    # two bots with that position (the forward rotations alone always do).
    table = tuple(range(10, 10 + n))
    sets = rotations(table)
    assert len(sets) == len(set(sets)) == 2 * n == seatings_per_table(n)
    follows = Counter((seats[s], seats[(s + 1) % n]) for seats in sets for s in range(n))
    for a, b in itertools.permutations(table, 2):
        assert follows[(a, b)] == follows[(b, a)], (a, b)
    assert Counter((seats[s], s) for seats in sets for s in range(n)) == Counter(
        {(b, s): 2 for b in table for s in range(n)}
    )


def test_two_seats_have_two_seatings() -> None:
    assert rotations((4, 9)) == [(4, 9), (9, 4)] and seatings_per_table(2) == 2
