"""The bot page's chart data: μ and its μ±3σ band after each rated match, from stored history."""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.models import RatingHistory

BAND = 3.0  # the band is μ ± 3σ: the rankings' conservative rating is its lower edge


def rating_series(history: Sequence[RatingHistory]) -> dict[str, list[float]]:
    """One point per history row, in rating order: x (1, 2, …), μ, μ−3σ, μ+3σ and match ids."""
    return {
        "x": [float(i) for i in range(1, len(history) + 1)],
        "mu": [h.mu_after for h in history],
        "low": [h.mu_after - BAND * h.sigma_after for h in history],
        "high": [h.mu_after + BAND * h.sigma_after for h in history],
        "match": [float(h.match_id) for h in history],
    }
