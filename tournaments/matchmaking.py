"""A ladder's matchmaking: which table of bots plays the next duplicate set (issue 34).

Pure functions over value objects: no storage, no server. Every draw comes from the
`random.Random` passed in, so a ladder with a seed picks the same tables again.

Rules (docs/ladder.md gives the measurements behind them):

- ``"cardshark"`` (the default): a bot with fewer than `new_sets` sets is seeded first
  (fewest sets first); then half the picks are a random table (holding the seed, if any)
  and half the table, among a bounded sample of candidate tables (a bot, one of its
  neighbours in mu, the other seats at random), whose adjacent pairs' order is least
  resolved: the summed entropy of P(i above j), each weighted by how much one match can
  still teach about that pair given the game's beta.
- ``"nearest"``: Halite III's coordinator (apiserver/apiserver/coordinator/matchmaking.py):
  a seed bot (25 % a least recently played bot with under 400 sets, 65 % weighted towards
  fewest sets, 10 % the least recently played of all), then opponents at random among its
  k nearest in mu, k = int(5 / (0.01 + u) ** 0.65).
- ``"random"``: a uniformly random table.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Literal

from tournaments.ratings import DEFAULT_BETA, Rating

Rule = Literal["cardshark", "nearest", "random"]
RULES: tuple[Rule, ...] = ("cardshark", "nearest", "random")

# A bot with fewer sets than this is seeded first by "cardshark".
NEW_SETS = 3
# Share of "cardshark" picks that are random tables (the rest target the least resolved pairs).
RANDOM_SHARE = 0.5
# Candidate tables scored per targeted pick, and the window in mu rank their bots come from.
SAMPLE_TABLES = 24
WINDOW_PER_SEAT = 2
# Provisional while sigma is above this (docs/ladder.md: about the sigma at which bench/ladder.py's
# newcomers were placed within ±2 of their true place in a 60-bot Knaves field).
PROVISIONAL_SIGMA = 0.75

# Halite III's constants.
HALITE_IDLE_GAMES = 400
HALITE_IDLE_POOL = 15
HALITE_NEWBIE_POOL = 20

_DRAWS_PER_SEAT = 20


@dataclass(frozen=True)
class Candidate:
    """A bot the ladder may seat: its rating, author, sets played and in flight, and when it
    last played (any increasing clock, 0 for never)."""

    bot_id: int
    mu: float
    sigma: float
    author: str | None = None
    sets_played: int = 0
    in_flight: int = 0
    last_played: float = 0.0


def provisional(rating: Rating, threshold: float = PROVISIONAL_SIGMA) -> bool:
    """Whether a bot is provisional: its sigma is still above `threshold`."""
    return rating.sigma > threshold


def p_above(a: Candidate, b: Candidate) -> float:
    """P(a's skill is above b's) from the two ratings: Phi((mu_a - mu_b) / sqrt(s_a² + s_b²))."""
    spread = math.sqrt(a.sigma**2 + b.sigma**2)
    if spread == 0.0:
        return 1.0 if a.mu > b.mu else 0.0 if a.mu < b.mu else 0.5
    return 0.5 * math.erfc(-(a.mu - b.mu) / (spread * math.sqrt(2)))


def table_need(table: Sequence[Candidate], beta: float = DEFAULT_BETA) -> float:
    """What a set at `table` can teach the ranking: over its bots' adjacent pairs in mu, the
    entropy (bits) of their order times the share v / (v + 2 beta²) of the pair's variance v
    one match can remove."""
    ordered = sorted(table, key=attrgetter("mu"))
    need = 0.0
    for a, b in zip(ordered, ordered[1:], strict=False):
        p = p_above(a, b)
        if 0.0 < p < 1.0:
            entropy = -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
            v = a.sigma**2 + b.sigma**2
            need += entropy * v / (v + 2 * beta**2)
    return need


def pick_table(
    candidates: Sequence[Candidate],
    seats: int,
    rng: random.Random,
    rule: Rule = "cardshark",
    one_per_author: bool = False,
    max_in_flight: int = 1,
    *,
    beta: float = DEFAULT_BETA,
    new_sets: int = NEW_SETS,
    random_share: float = RANDOM_SHARE,
    sample: int = SAMPLE_TABLES,
) -> tuple[int, ...] | None:
    """The bot ids of the next table by `rule`, or None when no table can be formed.

    A bot sits at most once; with `one_per_author` no two bots of one author (None: an author
    of its own) share the table; a bot with `max_in_flight` sets in flight is not seated."""
    if seats < 2:
        raise ValueError(f"a table needs at least 2 seats, not {seats}")
    if max_in_flight < 1:
        raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: one of {', '.join(RULES)}")
    ids = {c.bot_id for c in candidates}
    if len(ids) != len(candidates):
        raise ValueError("each bot may be a candidate once")
    eligible = [c for c in candidates if c.in_flight < max_in_flight]
    if len(eligible) < seats:
        return None
    if one_per_author and len({_author(c) for c in eligible}) < seats:
        return None
    if rule == "random":
        table = _random_table(eligible, seats, rng, one_per_author, [])
    elif rule == "nearest":
        table = _nearest(eligible, seats, rng, one_per_author)
    else:
        table = _cardshark(
            eligible, seats, rng, one_per_author, beta, new_sets, random_share, sample
        )
    return None if table is None else tuple(c.bot_id for c in table)


def _author(c: Candidate) -> object:
    return (c.bot_id,) if c.author is None else c.author


def _fits(c: Candidate, table: Sequence[Candidate], one_per_author: bool) -> bool:
    if any(c.bot_id == t.bot_id for t in table):
        return False
    return not one_per_author or all(_author(c) != _author(t) for t in table)


def _fill(
    table: list[Candidate],
    pool: Iterable[Candidate],
    seats: int,
    one_per_author: bool,
) -> list[Candidate] | None:
    """`table` completed from `pool` in order, skipping bots that do not fit."""
    for c in pool:
        if len(table) == seats:
            break
        if _fits(c, table, one_per_author):
            table.append(c)
    return table if len(table) == seats else None


def _random_table(
    eligible: Sequence[Candidate],
    seats: int,
    rng: random.Random,
    one_per_author: bool,
    start: list[Candidate],
) -> list[Candidate] | None:
    """`start` completed at random: a few draws first (cheap in a large field), then a
    shuffle of the whole field (when authors or a small field make draws fail)."""
    table = list(start)
    for _ in range(_DRAWS_PER_SEAT * seats):
        if len(table) == seats:
            return table
        c = eligible[rng.randrange(len(eligible))]
        if _fits(c, table, one_per_author):
            table.append(c)
    return _fill(table, rng.sample(list(eligible), len(eligible)), seats, one_per_author)


def _cardshark(
    eligible: list[Candidate],
    seats: int,
    rng: random.Random,
    one_per_author: bool,
    beta: float,
    new_sets: int,
    random_share: float,
    sample: int,
) -> list[Candidate] | None:
    fewest = min(c.sets_played for c in eligible)
    seed: Candidate | None = None
    if fewest < new_sets:
        newest = [c for c in eligible if c.sets_played == fewest]
        seed = newest[rng.randrange(len(newest))]
    start = [] if seed is None else [seed]
    if rng.random() < random_share:
        return _random_table(eligible, seats, rng, one_per_author, start)
    ranked = sorted(eligible, key=attrgetter("mu"))
    seed_at = -1 if seed is None else next(i for i, c in enumerate(ranked) if c is seed)
    width = WINDOW_PER_SEAT * seats
    best: list[Candidate] | None = None
    best_need = -1.0
    for _ in range(sample):
        at = seed_at if seed_at >= 0 else rng.randrange(len(ranked))
        anchor = ranked[at]
        low, high = max(0, at - width), min(len(ranked), at + width + 1)
        window = ranked[low:at] + ranked[at + 1 : high]
        # the anchor and one neighbour in mu, the other seats anyone: the pair meets on one
        # deal among table-mates drawn from the whole field (edges depend on table-mates)
        table = _fill([anchor], rng.sample(window, len(window)), 2, one_per_author)
        if table is not None:
            table = _random_table(eligible, seats, rng, one_per_author, table)
        if table is None:
            continue
        need = table_need(table, beta)
        if need > best_need:
            best, best_need = table, need
    if best is None:  # the windows could not fill a table (authors): any table will do
        return _random_table(eligible, seats, rng, one_per_author, start)
    return best


def _nearest(
    eligible: list[Candidate], seats: int, rng: random.Random, one_per_author: bool
) -> list[Candidate] | None:
    seed = _halite_seed(eligible, rng)
    k = int(5.0 / (0.01 + rng.random()) ** 0.65)
    others = [c for c in eligible if c.bot_id != seed.bot_id]
    while True:
        # Halite draws its opponents at random among the k nearest in mu; where those cannot
        # fill the table (Halite then serves no game), k doubles until they can.
        close = heapq.nsmallest(k, others, key=lambda c: abs(c.mu - seed.mu))
        table = _fill([seed], rng.sample(close, len(close)), seats, one_per_author)
        if table is not None or k >= len(others):
            return table
        k *= 2


def _halite_seed(eligible: list[Candidate], rng: random.Random) -> Candidate:
    """Halite III's find_seed_player outside finals."""
    u = rng.random()
    if u > 0.75:  # 25 %: a random one of the 15 least recently played with < 400 sets
        idle = [c for c in eligible if c.sets_played < HALITE_IDLE_GAMES]
        if idle:
            pool = heapq.nsmallest(HALITE_IDLE_POOL, idle, key=attrgetter("last_played"))
            return pool[rng.randrange(len(pool))]
    if u > 0.1:  # 65 % (and the above when none): fewest sets, weighted with noise
        keyed = [
            (-(0.5 + 0.5 * rng.random()) / (c.sets_played + 1), i) for i, c in enumerate(eligible)
        ]
        fewest = heapq.nsmallest(HALITE_NEWBIE_POOL, keyed)
        return eligible[fewest[rng.randrange(len(fewest))][1]]
    # 10 %: the least recently played of all
    return min(eligible, key=attrgetter("last_played"))
