"""One tournament's result from its stored rows: standings, pairwise cross-table, rating change.

Pure computation over `TournamentRows` (Store.tournament_rows); nothing here touches the
database. The cross-table compares two entrants over the matches where both sat, with a 95 %
Student t-interval whose observations are deals, not matches: the rotations of one table
share their seed (tournaments/schedule.py), so their score differences are not independent.
Each pair of neighbours in the standings also gets P(the upper ranks above the lower) from
the same per-deal differences (tournaments/confidence.py).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from statistics import fmean, stdev
from typing import Any

from tournaments.confidence import ConfidenceGoal, p_above
from tournaments.models import MatchStatus, Tournament
from tournaments.ratings import Rating
from tournaments.sequential import t_quantile_975
from tournaments.store import LOAD_VOID_PREFIX, TournamentRows

INTERVAL = (
    "95 % Student t-interval over deals (one table in one round, all its rotations): "
    "mean ± t(0.975, n−1)·s/√n"
)
P_ABOVE = (
    "P(above next): P(a bot's true mean score exceeds the next one's) over the deals both "
    "played, T(n−1) at mean/(s/√n) of the per-deal differences (score statistics, not "
    "the TrueSkill rating)"
)
TRUESKILL = (
    "μ, σ: the TrueSkill rating of record (docs/ratings.md); μ − 3σ, the rankings' sort key, "
    "is a skill the bot has with 99.9 % confidence"
)


@dataclass(frozen=True)
class Estimate:
    """A mean over n observations with its 95 % t-interval (None when n < 2)."""

    n: int
    mean: float | None
    low: float | None
    high: float | None

    def flipped(self) -> Estimate:
        """The same estimate for the negated observations."""
        return Estimate(
            self.n,
            None if self.mean is None else 0.0 - self.mean,
            None if self.high is None else 0.0 - self.high,
            None if self.low is None else 0.0 - self.low,
        )


def estimate(values: Sequence[float]) -> Estimate:
    """The mean of `values` with its 95 % t-interval mean ± t(0.975, n−1)·s/√n (s: sample sd)."""
    n = len(values)
    if n == 0:
        return Estimate(0, None, None, None)
    mean = fmean(values)
    if n < 2:
        return Estimate(n, mean, None, None)
    half = t_quantile_975(n - 1) * stdev(values) / math.sqrt(n)
    return Estimate(n, mean, mean - half, mean + half)


@dataclass(frozen=True)
class Standing:
    """One entrant's totals over the tournament's finished matches and its rating change."""

    bot_id: int
    bot: str
    retired: bool
    matches: int
    total: float
    places: tuple[int, ...]
    faults: int
    forfeits: int
    before: Rating | None
    after: Rating | None

    @property
    def mean(self) -> float | None:
        """The mean score per match, None before its first match."""
        return self.total / self.matches if self.matches else None


@dataclass(frozen=True)
class Pair:
    """Two entrants compared over the matches where both sat: A's score minus B's."""

    a_id: int
    a: str
    b_id: int
    b: str
    matches: int
    difference: Estimate


@dataclass(frozen=True)
class Neighbours:
    """Two entrants next to each other in the standings: how sure it is that A ranks above B."""

    a_id: int
    a: str
    b_id: int
    b: str
    difference: Estimate  # A's score minus B's, per deal
    p_above: float | None  # P(A's true mean difference over B is above 0); None below 2 deals


@dataclass(frozen=True)
class TournamentResult:
    """A tournament's standings, cross-table, progress and voided matches."""

    tournament: Tournament
    finished: int
    scheduled: int
    standings: list[Standing]
    pairs: list[Pair]
    load_voids: int
    other_voids: int
    neighbours: list[Neighbours] = field(default_factory=list)

    def p_above_next(self, bot_id: int) -> float | None:
        """P(this bot ranks above the next one in the standings); None for the last or unknown."""
        for pair in self.neighbours:
            if pair.a_id == bot_id:
                return pair.p_above
        return None

    def difference(self, a: int, b: int) -> Estimate:
        """A's score minus B's (bot ids) over the matches where both sat."""
        for pair in self.pairs:
            if (pair.a_id, pair.b_id) == (a, b):
                return pair.difference
            if (pair.a_id, pair.b_id) == (b, a):
                return pair.difference.flipped()
        raise KeyError(f"bots {a} and {b} are not both entrants")

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data; unknown numbers are null."""
        t = self.tournament
        return {
            "tournament": {
                "id": t.id,
                "name": t.name,
                "game": t.game,
                "format": t.format,
                "status": t.status,
                "seats": t.seats,
                "rounds": t.rounds,
                "finished": self.finished,
                "scheduled": self.scheduled,
                "worker": t.worker,
            },
            "standings": [
                {
                    "bot": s.bot,
                    "bot_id": s.bot_id,
                    "retired": s.retired,
                    "matches": s.matches,
                    "total_score": s.total,
                    "mean_score": s.mean,
                    "places": list(s.places),
                    "faults": s.faults,
                    "forfeits": s.forfeits,
                    "rating_before": _rating_json(s.before),
                    "rating_after": _rating_json(s.after),
                    "p_above_next": self.p_above_next(s.bot_id),
                }
                for s in self.standings
            ],
            "cross_table": [
                {
                    "a": p.a,
                    "b": p.b,
                    "matches": p.matches,
                    "n": p.difference.n,
                    "mean_difference": p.difference.mean,
                    "ci_low": p.difference.low,
                    "ci_high": p.difference.high,
                }
                for p in self.pairs
            ],
            "neighbours": [
                {
                    "a": p.a,
                    "b": p.b,
                    "n": p.difference.n,
                    "mean_difference": p.difference.mean,
                    "ci_low": p.difference.low,
                    "ci_high": p.difference.high,
                    "p_above": p.p_above,
                }
                for p in self.neighbours
            ],
            "interval": INTERVAL,
            "p_above": P_ABOVE,
            "voids": {"load": self.load_voids, "other": self.other_voids},
        }


def unresolved(result: TournamentResult, goal: ConfidenceGoal) -> list[Neighbours]:
    """The neighbour pairs of the standings not yet separated at the goal's confidence."""
    return [pair for pair in result.neighbours if not goal.separates(pair.p_above)]


class _Tally:
    """An entrant's running totals over finished matches."""

    def __init__(self, seats: int) -> None:
        self.matches = 0
        self.total = 0.0
        self.places = [0] * seats
        self.faults = 0
        self.forfeits = 0

    def add(self, score: float, rank: int, faults: int, forfeited: bool) -> None:
        """Count one more finished match."""
        self.matches += 1
        self.total += score
        if 1 <= rank <= len(self.places):
            self.places[rank - 1] += 1
        self.faults += faults
        self.forfeits += int(forfeited)


def _rating_json(rating: Rating | None) -> dict[str, float] | None:
    return None if rating is None else {"mu": rating.mu, "sigma": rating.sigma}


def summarise(rows: TournamentRows) -> TournamentResult:
    """Standings, cross-table, rating before/after and void counts of one tournament."""
    tournament = rows.tournament
    finished = {m.id: m for m in rows.matches if m.status == MatchStatus.FINISHED.value}
    voided = [m for m in rows.matches if m.status == MatchStatus.VOIDED.value]
    load_voids = sum(
        1
        for m in voided
        if str((m.result or {}).get("void_reason", "")).startswith(LOAD_VOID_PREFIX)
    )
    position = {b.id: i for i, b in enumerate(rows.entrants) if b.id is not None}
    seated: dict[int, dict[int, float]] = defaultdict(dict)  # match id -> bot id -> score
    tally: dict[int, _Tally] = defaultdict(lambda: _Tally(tournament.seats))
    for seat in rows.seat_results:
        if seat.match_id in finished:
            seated[seat.match_id][seat.bot_id] = seat.score
            tally[seat.bot_id].add(seat.score, seat.rank, seat.faults, seat.forfeited)
    # (a, b) in entrant order -> deal (round, table) -> A's score minus B's per match
    deals: dict[tuple[int, int], dict[tuple[int, int], list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for match_id, score in seated.items():
        match = finished[match_id]
        bots = sorted((b for b in score if b in position), key=position.__getitem__)
        for i, x in enumerate(bots):
            for y in bots[i + 1 :]:
                deals[(x, y)][(match.round, match.table_index)].append(score[x] - score[y])
    first: dict[int, Rating] = {}
    last: dict[int, Rating] = {}
    for change in rows.history:  # in rating order
        first.setdefault(change.bot_id, Rating(change.mu_before, change.sigma_before))
        last[change.bot_id] = Rating(change.mu_after, change.sigma_after)
    standings = []
    for bot in rows.entrants:
        assert bot.id is not None
        t = tally[bot.id]
        standings.append(
            Standing(
                bot_id=bot.id,
                bot=bot.name,
                retired=bot.removed is not None,
                matches=t.matches,
                total=t.total,
                places=tuple(t.places),
                faults=t.faults,
                forfeits=t.forfeits,
                before=first.get(bot.id),
                after=last.get(bot.id),
            )
        )
    standings.sort(key=lambda s: (s.mean is None, -(s.mean or 0.0), s.bot))
    pairs = []
    per_deal: dict[tuple[int, int], list[float]] = {}
    for i, a in enumerate(rows.entrants):
        for b in rows.entrants[i + 1 :]:
            assert a.id is not None and b.id is not None
            by_deal = deals.get((a.id, b.id), {})
            means = [fmean(diffs) for _, diffs in sorted(by_deal.items())]
            per_deal[(a.id, b.id)] = means
            per_deal[(b.id, a.id)] = [0.0 - m for m in means]
            played = sum(len(diffs) for diffs in by_deal.values())
            pairs.append(Pair(a.id, a.name, b.id, b.name, played, estimate(means)))
    neighbours = []
    for upper, lower in pairwise(standings):
        values = per_deal.get((upper.bot_id, lower.bot_id), [])
        neighbours.append(
            Neighbours(
                upper.bot_id,
                upper.bot,
                lower.bot_id,
                lower.bot,
                estimate(values),
                p_above(values),
            )
        )
    return TournamentResult(
        tournament=tournament,
        finished=len(finished),
        scheduled=sum(1 for m in rows.matches if m.status != MatchStatus.VOIDED.value),
        standings=standings,
        pairs=pairs,
        load_voids=load_voids,
        other_voids=len(voided) - load_voids,
        neighbours=neighbours,
    )
