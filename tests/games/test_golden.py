"""Every registered game replays its golden transcript exactly."""

from __future__ import annotations

import pytest

from games.registry import all_games, get_game
from tests.games.golden import path_for, transcript


@pytest.mark.parametrize("name", sorted(all_games()))
def test_game_matches_its_golden_transcript(name: str) -> None:
    path = path_for(name)
    assert path.exists(), (
        f"{name} has no golden transcript; run python -m tests.games.golden {name}"
    )
    expected = path.read_text().splitlines()
    actual = transcript(get_game(name))
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        assert got == want, f"{name}: golden transcript differs at line {i + 1}"
    assert len(actual) == len(expected)
