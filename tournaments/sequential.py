"""Sequential tests on per-set score differences: a GSPRT and the mean's interval.

A set is one deal played in every seat rotation with two bots swapping seats; its value is
the first bot's summed score minus the second's, over the set's matches, divided by the
matches (points a match). Sets are the independent unit, as a game pair with colours
reversed is in chess testing; nothing here does I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
MIN_SETS = 5  # no verdict from fewer sets: their variance says too little
# A spread of zero (a bot against itself, every set a tie) would make the likelihood ratio
# infinite; this floor, a billionth of the hypotheses' gap squared, keeps it finite.
VARIANCE_FLOOR = 1e-9
# Student's t 97.5 % quantiles for 1 to 4 degrees of freedom, where the expansion is poor.
T975 = (12.706204736174698, 4.302652729749464, 3.182446305284263, 2.7764451051977987)

BETTER = "better"
NOT_BETTER = "not better"
UNDECIDED = "undecided"


@dataclass(frozen=True)
class Moments:
    """Count, mean and sum of squared deviations of values so far (Welford's update)."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, value: float) -> Moments:
        """These moments with one more value."""
        n = self.n + 1
        delta = value - self.mean
        mean = self.mean + delta / n
        return Moments(n, mean, self.m2 + delta * (value - mean))

    @classmethod
    def of(cls, values: Iterable[float]) -> Moments:
        """The moments of values."""
        moments = cls()
        for value in values:
            moments = moments.add(value)
        return moments

    @property
    def variance(self) -> float:
        """The maximum-likelihood variance (divided by n); 0 for fewer than two values."""
        return self.m2 / self.n if self.n > 1 else 0.0

    @property
    def sample_variance(self) -> float:
        """The unbiased variance (divided by n - 1); infinite for fewer than two values."""
        return self.m2 / (self.n - 1) if self.n > 1 else math.inf


def t_quantile_975(df: int) -> float:
    """Student's t 97.5 % quantile with df degrees of freedom (exact to df 4, then
    Cornish-Fisher, under 0.001 off; the normal's beyond df 1000)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df <= len(T975):
        return T975[df - 1]
    if df > 1000:
        return Z95
    z, v = Z95, float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


@dataclass(frozen=True)
class Interval:
    """A mean with its 95 % interval (Student's t on the sets); infinite below two sets."""

    sets: int
    mean: float
    low: float
    high: float


def mean_interval(values: Sequence[float] | Moments) -> Interval:
    """The mean of per-set values with its 95 % confidence interval, each set one value."""
    moments = values if isinstance(values, Moments) else Moments.of(values)
    if moments.n < 2:
        return Interval(moments.n, moments.mean, -math.inf, math.inf)
    half = t_quantile_975(moments.n - 1) * math.sqrt(moments.sample_variance / moments.n)
    return Interval(moments.n, moments.mean, moments.mean - half, moments.mean + half)


@dataclass(frozen=True)
class SprtSettings:
    """H0: the mean difference is at most h0; H1: at least h1; error rates alpha and beta."""

    h0: float
    h1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_sets: int = MIN_SETS

    def __post_init__(self) -> None:
        if not self.h1 > self.h0:
            raise ValueError(f"h1 must be above h0 (got h0 {self.h0:g}, h1 {self.h1:g})")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < rate < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, not {rate:g}")
        if self.min_sets < 2:
            raise ValueError(f"min_sets must be at least 2, not {self.min_sets}")

    @property
    def lower(self) -> float:
        """Accept H0 (not better) at or below log(beta / (1 - alpha))."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 (better) at or above log((1 - beta) / alpha)."""
        return math.log((1 - self.beta) / self.alpha)


def llr(values: Sequence[float] | Moments, h0: float, h1: float) -> float:
    """The generalized log-likelihood ratio of H1 (mean h1) against H0 (mean h0) for
    independent normal values of unknown variance, the variance fitted under each."""
    moments = values if isinstance(values, Moments) else Moments.of(values)
    if moments.n == 0:
        return 0.0
    # Under a mean h the variance's maximum-likelihood fit is var + (mean - h)^2, and the
    # likelihood is that to the power -n/2. As a function of the mean, that ratio peaks
    # where (mean - h0)(mean - h1) = var and falls back to nothing beyond: a mean far past
    # h1 (Kill's +28 points a set against h1 0.5) would count as weak evidence and take
    # hundreds of sets. A mean past either turning point counts as the turning point.
    var = max(moments.variance, VARIANCE_FLOOR * (h1 - h0) ** 2)
    middle, reach = (h0 + h1) / 2, math.sqrt(((h1 - h0) / 2) ** 2 + var)
    mean = min(max(moments.mean, middle - reach), middle + reach)
    return moments.n / 2 * math.log((var + (mean - h0) ** 2) / (var + (mean - h1) ** 2))


@dataclass(frozen=True)
class SprtStep:
    """The test after a set: the estimate, the LLR against its bounds, any verdict."""

    estimate: Interval
    llr: float
    lower: float
    upper: float
    verdict: str | None  # BETTER or NOT_BETTER once decided, else None

    @property
    def sets(self) -> int:
        """Sets seen."""
        return self.estimate.sets


def sprt_steps(values: Iterable[float], settings: SprtSettings) -> Iterator[SprtStep]:
    """The test after each value in order, ending with the first verdict."""
    moments = Moments()
    for value in values:
        moments = moments.add(value)
        ratio = llr(moments, settings.h0, settings.h1)
        verdict = None
        if moments.n >= settings.min_sets:
            if ratio >= settings.upper:
                verdict = BETTER
            elif ratio <= settings.lower:
                verdict = NOT_BETTER
        yield SprtStep(mean_interval(moments), ratio, settings.lower, settings.upper, verdict)
        if verdict is not None:
            return


@dataclass(frozen=True)
class SprtResult:
    """A finished (or stopped) test: better, not better, or undecided, and its last step."""

    verdict: str
    last: SprtStep | None  # None when no set was played


def sprt(values: Iterable[float], settings: SprtSettings, max_sets: int) -> SprtResult:
    """Run the test over at most max_sets values: the first verdict, else undecided."""
    last = None
    for step in sprt_steps(values, settings):
        last = step
        if step.verdict is not None:
            return SprtResult(step.verdict, step)
        if step.sets >= max_sets:
            break
    return SprtResult(UNDECIDED, last)
