"""Round-robin schedules as pure functions of bot ids, table size, seed and rounds."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tournaments.errors import NotEnoughEntrantsError, ScheduleError, TableCountError

# Seeds stay below 2**53 so they survive JSON readers that parse numbers as doubles.
SEED_LIMIT = 2**53

Table = tuple[int, ...]

_ATTEMPTS = 8
_STEPS_PER_ATTEMPT = 30000
# Once every pair meets, an attempt ends after this many steps without improvement.
_STALL_STEPS = 6000


@dataclass(frozen=True)
class ScheduledMatch:
    """One match of a schedule: its play-order index, place in the schedule, seed and seats."""

    index: int
    round: int
    table: int
    rotation: int
    seed: int
    seats: tuple[int, ...]


def check_entrants(entrants: int, seats: int) -> None:
    """Raise unless `entrants` bots can fill tables of `seats` seats."""
    if seats < 2:
        raise ScheduleError(f"a table needs at least 2 seats, not {seats}")
    if entrants < seats:
        raise NotEnoughEntrantsError(entrants, seats)


def all_tables(entrants: int, seats: int) -> list[Table]:
    """Every table of `seats` entrant positions drawn from `entrants`, in lexicographic order."""
    check_entrants(entrants, seats)
    return list(itertools.combinations(range(entrants), seats))


def min_covering_tables(entrants: int, seats: int) -> int:
    """The Schönheim lower bound on tables needed so that every pair of entrants meets."""
    check_entrants(entrants, seats)
    if entrants == seats:
        return 1
    per_entrant = math.ceil((entrants - 1) / (seats - 1))
    return math.ceil(entrants * per_entrant / seats)


def balanced_tables(entrants: int, seats: int, tables: int, seed: int) -> list[Table]:
    """`tables` distinct tables where every pair of entrants meets and appearances are even."""
    check_entrants(entrants, seats)
    total = math.comb(entrants, seats)
    if tables < 1:
        raise TableCountError(tables, entrants, seats, "at least one table is needed")
    if tables > total:
        raise TableCountError(
            tables, entrants, seats, f"only {total} distinct tables exist; omit tables= to play all"
        )
    if tables == total:
        return all_tables(entrants, seats)
    lower = min_covering_tables(entrants, seats)
    if tables < lower:
        raise TableCountError(
            tables, entrants, seats, f"every pair meeting needs at least {lower} tables"
        )
    rng = random.Random(seed)
    best: _Layout | None = None
    for _ in range(_ATTEMPTS):
        start = _Layout(entrants, seats, _greedy_tables(entrants, seats, tables, rng))
        layout = start.improve(rng, _STEPS_PER_ATTEMPT)
        if best is None or layout.cost() < best.cost():
            best = layout
        if best.uncovered == 0 and best.app_sq == _even_sumsq(tables * seats, entrants):
            break
    assert best is not None
    if best.uncovered:
        raise TableCountError(
            tables,
            entrants,
            seats,
            f"no layout found where every pair meets ({best.uncovered} pairs never met); "
            f"try more tables (at most {total})",
        )
    return [tuple(sorted(t)) for t in best.tables]


def rotations(table: Sequence[int]) -> list[tuple[int, ...]]:
    """A table's duplicate set: every cyclic rotation of its seating, then (three seats or
    more) every rotation of the seating reversed; rotation r < n puts table[r] in seat 0."""
    # Who sits after whom matters in trick games: with the forward rotations alone, the
    # bot listed first at a table always plays just before the second, and in Knaves that
    # shifts the pair's measured gap by over a point a match (docs/statistics.md).
    n = len(table)
    forward = [tuple(table[(r + s) % n] for s in range(n)) for r in range(n)]
    if n < 3:
        return forward
    backward = list(reversed(table))
    return forward + [tuple(backward[(r + s) % n] for s in range(n)) for r in range(n)]


def seatings_per_table(seats: int) -> int:
    """Matches in one table's duplicate set (see rotations)."""
    return seats if seats < 3 else 2 * seats


def schedule_size(entrants: int, seats: int, rounds: int = 1, tables: int | None = None) -> int:
    """How many matches round_robin would schedule, without building it."""
    check_entrants(entrants, seats)
    per_round = math.comb(entrants, seats) if tables is None else tables
    return per_round * seatings_per_table(seats) * rounds


def round_robin(
    bot_ids: Sequence[int],
    seats: int,
    *,
    seed: int,
    rounds: int = 1,
    tables: int | None = None,
) -> list[ScheduledMatch]:
    """The duplicate round robin: every table in every rotation on one seed, `rounds` times."""
    ids = list(bot_ids)
    duplicates = sorted({b for b in ids if ids.count(b) > 1})
    if duplicates:
        raise ScheduleError(f"entrants must be distinct; repeated bot ids: {duplicates}")
    check_entrants(len(ids), seats)
    if rounds < 1:
        raise ScheduleError(f"rounds must be at least 1, not {rounds}")
    layout = (
        all_tables(len(ids), seats)
        if tables is None
        else balanced_tables(len(ids), seats, tables, seed)
    )
    seeds = _distinct_seeds(seed, rounds * len(layout))
    matches: list[ScheduledMatch] = []
    for round_no, round_layout in enumerate(_round_layouts(layout, len(ids), rounds)):
        for table_no, table in enumerate(round_layout):
            table_seed = seeds[round_no * len(layout) + table_no]
            for rotation, positions in enumerate(rotations(table)):
                matches.append(
                    ScheduledMatch(
                        index=len(matches),
                        round=round_no,
                        table=table_no,
                        rotation=rotation,
                        seed=table_seed,
                        seats=tuple(ids[p] for p in positions),
                    )
                )
    return matches


def gauntlet(
    bot_ids: Sequence[int], seats: int, *, seed: int, rounds: int = 1
) -> list[ScheduledMatch]:
    """One bot against the field: bot_ids[0] sits at every table of seats-1 others drawn from
    the rest, each table in every rotation on one seed, `rounds` times with fresh seeds."""
    ids = list(bot_ids)
    if len(set(ids)) != len(ids):
        raise ScheduleError(f"entrants must be distinct; got {ids}")
    check_entrants(len(ids), seats)
    if rounds < 1:
        raise ScheduleError(f"rounds must be at least 1, not {rounds}")
    layout = [(0, *rest) for rest in itertools.combinations(range(1, len(ids)), seats - 1)]
    seeds = _distinct_seeds(seed, rounds * len(layout))
    matches: list[ScheduledMatch] = []
    for round_no in range(rounds):
        for table_no, table in enumerate(layout):
            for rotation, positions in enumerate(rotations(table)):
                matches.append(
                    ScheduledMatch(
                        index=len(matches),
                        round=round_no,
                        table=table_no,
                        rotation=rotation,
                        seed=seeds[round_no * len(layout) + table_no],
                        seats=tuple(ids[p] for p in positions),
                    )
                )
    return matches


def _round_layouts(layout: list[Table], entrants: int, rounds: int) -> list[list[Table]]:
    """The layout relabelled per round so that appearances stay even over all rounds."""
    # Relabelling keeps every pair meeting; giving the most used positions to the bots that
    # have played least keeps the totals within one of each other.
    appearances = Counter(p for table in layout for p in table)
    played = Counter({b: 0 for b in range(entrants)})
    out: list[list[Table]] = []
    for round_no in range(rounds):
        if round_no == 0:
            relabel = list(range(entrants))
        else:
            slots = sorted(range(entrants), key=lambda p: (-appearances[p], p))
            bots = sorted(range(entrants), key=lambda b: (played[b], b))
            relabel = [0] * entrants
            for slot, bot in zip(slots, bots, strict=True):
                relabel[slot] = bot
        tables = [tuple(sorted(relabel[p] for p in table)) for table in layout]
        played.update(b for table in tables for b in table)
        out.append(tables)
    return out


def _distinct_seeds(seed: int, count: int) -> list[int]:
    # A separate stream from the balanced-table search, so tables=N does not shift the seeds.
    rng = random.Random(f"cardshark-seeds:{seed}")
    seen: set[int] = set()
    out: list[int] = []
    while len(out) < count:
        value = rng.randrange(SEED_LIMIT)
        if value not in seen:
            seen.add(value)
            out.append(value)
    return out


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _greedy_tables(entrants: int, seats: int, count: int, rng: random.Random) -> list[set[int]]:
    """Tables built one by one, each covering as many unmet pairs as it can."""
    appearances = [0] * entrants
    met: dict[tuple[int, int], int] = {}
    used: set[frozenset[int]] = set()
    tables: list[set[int]] = []
    for _ in range(count):
        unmet = [
            sum(1 for o in range(entrants) if o != b and not met.get(_pair(b, o)))
            for b in range(entrants)
        ]
        first = min(range(entrants), key=lambda b: (appearances[b], -unmet[b], rng.random()))
        table = {first}
        while len(table) < seats:
            members = tuple(table)
            table.add(
                min(
                    (b for b in range(entrants) if b not in table),
                    key=lambda b: (
                        -sum(1 for m in members if not met.get(_pair(b, m))),
                        appearances[b],
                        sum(met.get(_pair(b, m), 0) for m in members),
                        rng.random(),
                    ),
                )
            )
        while frozenset(table) in used:
            table = set(rng.sample(range(entrants), seats))
        used.add(frozenset(table))
        tables.append(table)
        for b in table:
            appearances[b] += 1
        for a, b in itertools.combinations(sorted(table), 2):
            met[(a, b)] = met.get((a, b), 0) + 1
    return tables


class _Layout:
    """Tables with running pair and appearance counts, improved by single-member swaps."""

    def __init__(self, entrants: int, seats: int, tables: list[set[int]]) -> None:
        self.entrants = entrants
        self.seats = seats
        self.tables = tables
        self.appearances = [0] * entrants
        self.met = [[0] * entrants for _ in range(entrants)]
        for table in tables:
            for b in table:
                self.appearances[b] += 1
            for a, b in itertools.permutations(table, 2):
                self.met[a][b] += 1
        self.uncovered = sum(
            1 for a, b in itertools.combinations(range(entrants), 2) if not self.met[a][b]
        )
        self.app_sq = sum(x * x for x in self.appearances)
        self.pair_sq = sum(
            self.met[a][b] ** 2 for a, b in itertools.combinations(range(entrants), 2)
        )

    def cost(self) -> tuple[int, int, int]:
        """Unmet pairs, then unevenness of appearances, then of pair meetings (lower is better)."""
        return (self.uncovered, self.app_sq, self.pair_sq)

    def is_ideal(self) -> bool:
        """True when no layout can do better on any of the three counts."""
        k = self.entrants
        total_seats = len(self.tables) * self.seats
        total_pairs = len(self.tables) * self.seats * (self.seats - 1) // 2
        return (
            self.uncovered == 0
            and self.app_sq == _even_sumsq(total_seats, k)
            and self.pair_sq == _even_sumsq(total_pairs, k * (k - 1) // 2)
        )

    def energy(self) -> float:
        """The three counts weighted into one number for annealing."""
        return 12.0 * self.uncovered + 3.0 * self.app_sq + self.pair_sq

    def improve(self, rng: random.Random, steps: int) -> _Layout:
        """The best layout seen while annealing with member swaps and two-table exchanges."""
        used = {frozenset(t) for t in self.tables}
        best_cost = self.cost()
        best_tables = [set(t) for t in self.tables]
        best_step = 0
        for step in range(steps):
            if self.is_ideal() or (best_cost[0] == 0 and step - best_step > _STALL_STEPS):
                break
            # Geometric cooling: early on, worse layouts are accepted to escape local minima.
            temperature = max(0.05, 2.0 * 0.9993**step)
            moves = self._random_move(rng)
            if not moves:
                continue
            old_keys = {frozenset(self.tables[t]) for t, _, _ in moves}
            new_tables = {t: set(self.tables[t]) for t, _, _ in moves}
            for t, out, into in moves:
                new_tables[t].discard(out)
                new_tables[t].add(into)
            new_keys = {frozenset(tab) for tab in new_tables.values()}
            if len(new_keys) < len(new_tables) or (new_keys & (used - old_keys)):
                continue
            before = self.energy()
            for t, out, into in moves:
                self._swap(self.tables[t], out, into)
            delta = self.energy() - before
            if delta > 0 and rng.random() >= math.exp(-delta / temperature):
                for t, out, into in reversed(moves):
                    self._swap(self.tables[t], into, out)
                continue
            used -= old_keys
            used |= new_keys
            if self.cost() < best_cost:
                best_cost = self.cost()
                best_tables = [set(t) for t in self.tables]
                best_step = step
        return self if self.cost() <= best_cost else _Layout(self.entrants, self.seats, best_tables)

    def _random_move(self, rng: random.Random) -> list[tuple[int, int, int]]:
        """Swaps (table, out, into): one outsider in, or two tables trading a member each."""
        t = rng.randrange(len(self.tables))
        table = self.tables[t]
        out = rng.choice(tuple(table))
        if rng.random() < 0.5 or len(self.tables) < 2:
            into = rng.randrange(self.entrants)
            return [] if into in table else [(t, out, into)]
        u = rng.randrange(len(self.tables))
        other = self.tables[u]
        into = rng.choice(tuple(other))
        if u == t or into in table or out in other:
            return []
        return [(t, out, into), (u, into, out)]

    def _swap(self, table: set[int], out: int, into: int) -> None:
        table.discard(out)
        for m in table:
            self._meet(out, m, -1)
            self._meet(into, m, +1)
        table.add(into)
        for b, delta in ((out, -1), (into, +1)):
            old = self.appearances[b]
            self.appearances[b] = old + delta
            self.app_sq += (old + delta) ** 2 - old * old

    def _meet(self, a: int, b: int, delta: int) -> None:
        old = self.met[a][b]
        new = old + delta
        self.met[a][b] = self.met[b][a] = new
        self.pair_sq += new * new - old * old
        if old == 0 and new > 0:
            self.uncovered -= 1
        elif old > 0 and new == 0:
            self.uncovered += 1


def _even_sumsq(total: int, buckets: int) -> int:
    q, r = divmod(total, buckets)
    return r * (q + 1) ** 2 + (buckets - r) * q * q
