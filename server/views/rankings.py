"""A leaderboard row's numbers as every view writes them: the terminal's table and the page."""

from __future__ import annotations

from tournaments.store import RankingRow


def ranking_cells(row: RankingRow) -> list[str]:
    """μ, σ, μ − 3σ, matches, mean score and faults, formatted."""
    return [
        f"{row.mu:.2f}",
        f"{row.sigma:.2f}",
        f"{row.conservative:.2f}",
        str(row.matches),
        f"{row.mean_score:.2f}",
        str(row.faults),
    ]
