"""How sure a tournament's order is: P(A ranks above B) from per-set score differences.

A set is one deal (one table in one round) played in all its seat rotations; its value is
A's mean score minus B's over the set's matches. With n sets of mean x̄ and sample standard
deviation s, P(A above B) = T_{n−1}(x̄ / (s/√n)), Student's t distribution function: the
one-sided confidence that the true mean difference is above zero. Nothing here does I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, stdev


def t_cdf(t: float, df: int) -> float:
    """Student's t distribution function with df degrees of freedom, exact for integer df
    (the finite series of Abramowitz and Stegun 26.7.3-4)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:  # odd: 2/π (θ + sin θ cos θ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + ...))
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        inside = 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    else:  # even: sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + ...)
        term = total = 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        inside = math.sin(theta) * total
    inside = min(1.0, inside)  # P(|T| < |t|)
    return 0.5 + inside / 2 if t >= 0 else 0.5 - inside / 2


def p_above(values: Sequence[float]) -> float | None:
    """P(the true mean of values is above 0): T_{n−1}(mean / (s/√n)); None below two values.

    When every value is equal (s = 0) it is 1 above zero, 0 below and 0.5 at zero."""
    n = len(values)
    if n < 2:
        return None
    mean = fmean(values)
    spread = stdev(values)
    if spread == 0.0:
        return 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
    return t_cdf(mean / (spread / math.sqrt(n)), n - 1)


DEFAULT_MAX_ROUNDS = 20


@dataclass(frozen=True)
class ConfidenceGoal:
    """Play rounds until every neighbour pair is separated at `confidence`, or `max_rounds`."""

    confidence: float
    max_rounds: int = DEFAULT_MAX_ROUNDS

    def __post_init__(self) -> None:
        if not 0.5 < self.confidence < 1.0:
            raise ValueError(f"confidence must be above 0.5 and below 1, not {self.confidence:g}")
        if self.max_rounds < 1:
            raise ValueError(f"max rounds must be at least 1, not {self.max_rounds}")

    @property
    def threshold(self) -> float:
        """The P(above next) a pair needs: 1 − (1 − confidence) / (2 · max_rounds)."""
        # Bonferroni over both orders and every look (one per round): equal bots are then
        # reported separated, in either order, at some round with probability ≤ 1 − confidence.
        return 1.0 - (1.0 - self.confidence) / (2 * self.max_rounds)

    def separates(self, p: float | None) -> bool:
        """Whether a neighbour pair with P(above next) = p is separated."""
        return p is not None and p >= self.threshold
