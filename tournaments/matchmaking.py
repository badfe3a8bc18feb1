"""A ladder's matchmaking: which table of bots plays the next duplicate set (issue 34).

Pure functions over value objects: no storage, no server. Every draw comes from the
`random.Random` passed in, so a ladder with a seed picks the same tables again.

Rules (docs/ladder.md gives the measurements behind them):

- ``"cardshark"`` (the default): a bot with fewer than `new_sets` sets is seeded first
  (fewest sets first). Otherwise a share `top_share` of the picks seats the least resolved
  adjacent pair in mu among the top `top_pairs` + 1 bots (the entropy of their order,
  weighted by how much one match can still teach about it given the game's beta). The rest
  of every table is a balance pick: of a bounded sample of bots, those whose place is least
  known (the bots whose mu lies within their mu ± sigma, times sigma: a dense stretch of
  the order, where a bot's rank moves most per point of mu, gets more sets), each next seat
  the one of them that has met the table least (`meetings`, sets each pair sat together).
- ``"nearest"``: Halite III's coordinator (apiserver/apiserver/coordinator/matchmaking.py):
  a seed bot (25 % a least recently played bot with under 400 sets, 65 % weighted towards
  fewest sets, 10 % the least recently played of all), then opponents at random among its
  k nearest in mu, k = int(5 / (0.01 + u) ** 0.65).
- ``"random"``: a uniformly random table.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Literal

from tournaments.ratings import DEFAULT_BETA, Rating

Rule = Literal["cardshark", "nearest", "random"]
RULES: tuple[Rule, ...] = ("cardshark", "nearest", "random")

# A bot with fewer sets than this is seeded first by "cardshark".
NEW_SETS = 3
# Share of "cardshark" picks that seat the least resolved pair at the top of the order (0.2
# got the top right sooner but cost rho in Knaves: docs/ladder.md), and how many adjacent
# pairs from the top are candidates (5: the top 5 and the 6th).
TOP_SHARE = 0.15
TOP_PAIRS = 5
# Bots whose priority a balance pick computes (all of a smaller field), and how many of the
# highest priority the table-mates are chosen from by the fewest meetings.
PRIORITY_SAMPLE = 64
BALANCE_POOL = 12
# Provisional while sigma is above this (docs/ladder.md: about the sigma at which bench/ladder.py's
# newcomers were placed within ±2 of their true place in a 60-bot Knaves field).
PROVISIONAL_SIGMA = 0.75

# Halite III's constants.
HALITE_IDLE_GAMES = 400
HALITE_IDLE_POOL = 15
HALITE_NEWBIE_POOL = 20

_DRAWS_PER_SEAT = 20

# Sets each pair of bots sat at together, keyed by pair_key.
Meetings = Mapping[tuple[int, int], int]


def pair_key(a: int, b: int) -> tuple[int, int]:
    """The key of a pair of bots in a `Meetings` mapping: the smaller id first."""
    return (a, b) if a < b else (b, a)


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
    top_share: float = TOP_SHARE,
    top_pairs: int = TOP_PAIRS,
    sample: int = PRIORITY_SAMPLE,
    meetings: Meetings | None = None,
) -> tuple[int, ...] | None:
    """The bot ids of the next table by `rule`, or None when no table can be formed.

    A bot sits at most once; with `one_per_author` no two bots of one author (None: an author
    of its own) share the table; a bot with `max_in_flight` sets in flight is not seated.
    `meetings` (sets each pair sat together, by pair_key; none when omitted) lets
    "cardshark" seat bots that have met least, as a balanced round robin does."""
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
            eligible,
            seats,
            rng,
            one_per_author,
            beta,
            new_sets,
            top_share,
            top_pairs,
            sample,
            {} if meetings is None else meetings,
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
    top_share: float,
    top_pairs: int,
    sample: int,
    meetings: Meetings,
) -> list[Candidate] | None:
    fewest = min(c.sets_played for c in eligible)
    start: list[Candidate] = []
    if fewest < new_sets:
        newest = [c for c in eligible if c.sets_played == fewest]
        start = [newest[rng.randrange(len(newest))]]
    elif rng.random() < top_share:
        start = _top_pair(eligible, rng, one_per_author, beta, top_pairs)
    return _balanced(eligible, seats, rng, one_per_author, start, sample, meetings)


def _top_pair(
    eligible: list[Candidate],
    rng: random.Random,
    one_per_author: bool,
    beta: float,
    top_pairs: int,
) -> list[Candidate]:
    """The adjacent pair in mu among the top `top_pairs` + 1 bots whose order a set can teach
    most (table_need; ties at random), or none."""
    top = heapq.nlargest(top_pairs + 1, eligible, key=attrgetter("mu"))
    best: list[Candidate] = []
    best_key = (-1.0, 0.0)
    for a, b in zip(top, top[1:], strict=False):
        if one_per_author and _author(a) == _author(b):
            continue
        key = (table_need((a, b), beta), rng.random())
        if key > best_key:
            best, best_key = [a, b], key
    return best


def _balanced(
    eligible: Sequence[Candidate],
    seats: int,
    rng: random.Random,
    one_per_author: bool,
    start: list[Candidate],
    sample: int,
    meetings: Meetings,
) -> list[Candidate] | None:
    """`start` completed by the bots whose place is least known, each seat the one that has
    met the table least.

    A bot's priority is the number of bots whose mu lies within its mu ± sigma, times its
    sigma: about its rank's uncertainty times its sigma, so the greedy pick gives a bot sets
    in proportion to how dense the order is around it (where a point of mu moves a rank
    most) and, within a stretch, to the bots played least. It is computed for `sample` bots
    at random (all of a smaller field); the table-mates come from the BALANCE_POOL highest."""
    mus = sorted(c.mu for c in eligible)
    drawn = eligible if len(eligible) <= sample else rng.sample(eligible, sample)

    def priority(c: Candidate) -> float:
        near = bisect.bisect_right(mus, c.mu + c.sigma) - bisect.bisect_left(mus, c.mu - c.sigma)
        return near * c.sigma

    scored = sorted(((-priority(c), rng.random(), c) for c in drawn), key=lambda t: t[:2])
    pool = [c for _, _, c in scored[:BALANCE_POOL]]
    table = list(start)
    if not table:
        table.append(pool[0])
    while len(table) < seats:
        best: Candidate | None = None
        best_met = -1
        for c in pool:  # in priority order: the first of the fewest meetings
            if not _fits(c, table, one_per_author):
                continue
            met = sum(meetings.get(pair_key(c.bot_id, t.bot_id), 0) for t in table)
            if best is None or met < best_met:
                best, best_met = c, met
        if best is None:  # the pool cannot fill the table (authors): at random
            return _random_table(eligible, seats, rng, one_per_author, table)
        table.append(best)
    return table


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
