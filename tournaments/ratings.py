"""Ratings as pure functions over value objects: the set rating of record and placements.

The rating of record is a Gaussian model on score margins, updated once per rotation set.
The per-match TrueSkill update of earlier versions (`rate_match`, `apply_match`) is kept as
the baseline that bench/ranking_quality.py measures the rating of record against.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import trueskill

from tournaments.errors import ResultError

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
DEFAULT_BETA = DEFAULT_SIGMA / 2
DEFAULT_TAU = DEFAULT_SIGMA / 100
DEFAULT_DRAW_PROBABILITY = 0.10

# Stored with the ratings: a database rated by another method is recomputed when opened.
RATING_METHOD = 2
RATING_METHOD_NAME = "set margins"


@dataclass(frozen=True)
class TrueSkillSettings:
    """A tournament's rating settings: prior mu and sigma, margin noise beta, tau, draws."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    beta: float = DEFAULT_BETA
    tau: float = DEFAULT_TAU
    draw_probability: float = DEFAULT_DRAW_PROBABILITY

    def __post_init__(self) -> None:
        for name in ("mu", "sigma", "beta", "tau", "draw_probability"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ResultError(f"TrueSkill {name} must be a finite number, not {value!r}")
        if self.sigma <= 0 or self.beta <= 0 or self.tau < 0:
            raise ResultError(
                f"TrueSkill needs sigma > 0, beta > 0 and tau >= 0 "
                f"(got sigma={self.sigma}, beta={self.beta}, tau={self.tau})"
            )
        if not 0 <= self.draw_probability < 1:
            raise ResultError(
                f"TrueSkill draw_probability must be in [0, 1), not {self.draw_probability}"
            )

    def environment(self) -> trueskill.TrueSkill:
        """A TrueSkill environment with these settings (never the package's global one)."""
        return _environment(self)

    def initial(self) -> Rating:
        """The rating of a bot before its first match under these settings."""
        return Rating(self.mu, self.sigma)

    def between_tournaments(self, rating: Rating) -> Rating:
        """A rating carried into a new tournament: sigma widened once by tau."""
        return Rating(rating.mu, math.sqrt(rating.sigma**2 + self.tau**2))


@dataclass(frozen=True)
class Rating:
    """A skill estimate: mean mu and uncertainty sigma."""

    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """The conservative estimate mu - 3 sigma that rankings sort by."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class SeatOutcome:
    """How one seat ended a finished match: final score, faults charged, forfeited or not."""

    score: float
    faults: int = 0
    forfeited: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.score, int | float) or not math.isfinite(self.score):
            raise ResultError(f"a seat's score must be a finite number, not {self.score!r}")
        if isinstance(self.faults, bool) or not isinstance(self.faults, int) or self.faults < 0:
            raise ResultError(f"a seat's faults must be a count >= 0, not {self.faults!r}")


@dataclass(frozen=True)
class RatingChange:
    """One bot's rating before and after a match."""

    bot_id: int
    before: Rating
    after: Rating


def placements(outcomes: Sequence[SeatOutcome]) -> tuple[int, ...]:
    """Ranks per seat (1 = best) by score, ties shared, forfeited seats below all others."""
    keys = [(o.forfeited, -float(o.score)) for o in outcomes]
    return tuple(1 + sum(1 for other in keys if other < key) for key in keys)


def rate_match(
    settings: TrueSkillSettings, before: Sequence[Rating], ranks: Sequence[int]
) -> list[Rating]:
    """New ratings after a free-for-all where seat i placed ranks[i] (lower is better)."""
    if len(before) != len(ranks) or len(before) < 2:
        raise ResultError(
            f"a rated match needs at least 2 seats and one rank per seat "
            f"(got {len(before)} ratings, {len(ranks)} ranks)"
        )
    env = settings.environment()
    groups = [(env.create_rating(r.mu, r.sigma),) for r in before]
    rated = env.rate(groups, ranks=list(ranks))
    return [Rating(float(group[0].mu), float(group[0].sigma)) for group in rated]


def apply_match(
    settings: TrueSkillSettings,
    current: Mapping[int, Rating],
    bot_ids: Sequence[int],
    ranks: Sequence[int],
) -> list[RatingChange]:
    """Rate one match: seat i is bot_ids[i]; bots missing from current start at the initial."""
    if len(set(bot_ids)) != len(bot_ids):
        raise ResultError(f"a bot cannot hold two seats of one rated match: {list(bot_ids)}")
    before = [current.get(b, settings.initial()) for b in bot_ids]
    after = rate_match(settings, before, ranks)
    return [RatingChange(b, x, y) for b, x, y in zip(bot_ids, before, after, strict=True)]


def set_scores(
    matches: Sequence[tuple[Sequence[int], Sequence[SeatOutcome]]],
) -> tuple[list[int], list[float]]:
    """Bots of a set (first seen first) and each one's rating score: points a match.

    A forfeited seat scores at most the lowest score of the seats that played on in that
    match, so a forfeit never gains from the referee's fallback play.
    """
    totals: dict[int, float] = {}
    counts: dict[int, int] = {}
    for bot_ids, outcomes in matches:
        if len(bot_ids) != len(outcomes):
            raise ResultError(f"a match has {len(bot_ids)} seats but {len(outcomes)} outcomes")
        played_on = [float(o.score) for o in outcomes if not o.forfeited]
        floor = min(played_on) if played_on else math.inf
        for bot, outcome in zip(bot_ids, outcomes, strict=True):
            score = float(outcome.score)
            if outcome.forfeited:
                score = min(score, floor)
            totals[bot] = totals.get(bot, 0.0) + score
            counts[bot] = counts.get(bot, 0) + 1
    bots = list(totals)
    return bots, [totals[b] / counts[b] for b in bots]


def rate_set(
    settings: TrueSkillSettings, before: Sequence[Rating], scores: Sequence[float], matches: int
) -> list[Rating]:
    """New ratings after a set where seat i scored scores[i] points a match over `matches`.

    Only the margins inform: bot i observes its skill as the table's mean rating plus
    scores[i] - mean(scores), with noise variance beta^2 (k-1) / (k matches) at k seats;
    each bot's Gaussian is updated by that one observation. No drift is added.
    """
    k = len(before)
    if k < 2 or len(scores) != k:
        raise ResultError(
            f"a rated set needs at least 2 bots and one score per bot "
            f"(got {k} ratings, {len(scores)} scores)"
        )
    if matches < 1:
        raise ResultError(f"a rated set needs at least one match, not {matches}")
    for score in scores:
        if not math.isfinite(score):
            raise ResultError(f"a set score must be a finite number, not {score!r}")
    # Taking the table's mean rating as known (rather than integrating it out) weighs every
    # set alike, as a running mean does: the exact contrast posterior reduced to marginals
    # over-weighted late sets and needed ~20 % more matches to order a field.
    precision = matches * k / (settings.beta**2 * (k - 1))
    centre = math.fsum(scores) / k
    level = math.fsum(r.mu for r in before) / k
    out = []
    for r, s in zip(before, scores, strict=True):
        variance = 1.0 / (1.0 / r.sigma**2 + precision)
        observed = level + s - centre
        out.append(
            Rating(variance * (r.mu / r.sigma**2 + precision * observed), math.sqrt(variance))
        )
    return out


def apply_set(
    settings: TrueSkillSettings,
    current: Mapping[int, Rating],
    bot_ids: Sequence[int],
    scores: Sequence[float],
    matches: int,
    *,
    carried: Collection[int] = (),
) -> list[RatingChange]:
    """Rate one set: bot_ids[i] scored scores[i] points a match; unknown bots start at initial.

    Bots in `carried` come from an earlier tournament: their sigma is widened by tau first.
    """
    if len(set(bot_ids)) != len(bot_ids):
        raise ResultError(f"a bot cannot be rated twice in one set: {list(bot_ids)}")
    before = [current.get(b, settings.initial()) for b in bot_ids]
    start = [
        settings.between_tournaments(r) if b in carried else r
        for b, r in zip(bot_ids, before, strict=True)
    ]
    after = rate_set(settings, start, scores, matches)
    return [RatingChange(b, x, y) for b, x, y in zip(bot_ids, before, after, strict=True)]


@functools.lru_cache(maxsize=64)
def _environment(settings: TrueSkillSettings) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(
        mu=settings.mu,
        sigma=settings.sigma,
        beta=settings.beta,
        tau=settings.tau,
        draw_probability=settings.draw_probability,
        backend=None,
    )
