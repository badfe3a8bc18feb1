"""TrueSkill ratings as pure functions over value objects: placements and per-match updates."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import trueskill

from tournaments.errors import ResultError

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
DEFAULT_BETA = DEFAULT_SIGMA / 2
DEFAULT_TAU = DEFAULT_SIGMA / 100
DEFAULT_DRAW_PROBABILITY = 0.10


@dataclass(frozen=True)
class TrueSkillSettings:
    """The TrueSkill environment a tournament is rated with (trueskill package defaults)."""

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
