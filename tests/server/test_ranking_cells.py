"""A leaderboard row's numbers, written once for the terminal and the page."""

from __future__ import annotations

from server.views.rankings import ranking_cells
from server.web.tournament import ranking_rows
from tournaments.store import RankingRow


def test_a_rows_numbers_are_written_to_two_places_in_both_views() -> None:
    row = RankingRow(
        rank=1, bot_id=7, bot="alpha", mu=25.0, sigma=8.333333, conservative=0.0049,
        matches=3, mean_score=1.255, faults=2,
    )  # fmt: skip
    assert ranking_cells(row) == ["25.00", "8.33", "0.00", "3", "1.25", "2"]
    (page,) = ranking_rows([row])
    assert (page["rank"], page["bot"], page["cells"]) == (1, "alpha", ranking_cells(row))
