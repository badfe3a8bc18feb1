"""A failure of the server itself voids the match: never rated, played again."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest

from games.registry import get_game
from server.play.tournament import run_tournament
from tests.server.conftest import RANDOM_BOT
from tournaments.models import MatchStatus
from tournaments.store import Store


def test_engine_failure_voids_the_match_and_the_runner_plays_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = get_game("knaves")
    real_view = game.view
    calls = {"n": 0}

    def flaky_view(state: Any, seat: int) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 40:  # once, in the middle of the first match
            raise RuntimeError("disk on fire")
        return real_view(state, seat)

    monkeypatch.setattr(game, "view", flaky_view)
    store = Store(f"sqlite:///{tmp_path / 'cs.db'}")
    names = []
    for i in range(3):
        bot, _ = store.add_bot(f"b{i}", shlex.join(RANDOM_BOT))
        names.append(bot.name)
    tournament = store.create_tournament("knaves", names, seed=1)
    assert tournament.id is not None
    recorded = asyncio.run(run_tournament(store, tournament.id, log_dir=tmp_path / "logs"))
    assert recorded == 6
    matches = store.matches(tournament.id)
    voided = [m for m in matches if m.status == MatchStatus.VOIDED.value]
    finished = [m for m in matches if m.status == MatchStatus.FINISHED.value]
    assert len(voided) == 1 and "disk on fire" in (voided[0].result or {})["void_reason"]
    assert sorted(m.schedule_index for m in finished) == list(range(6))
    (again,) = [m for m in finished if m.schedule_index == voided[0].schedule_index]
    assert again.attempt == 1 and again.seed == voided[0].seed
    assert store.seat_results(voided[0].id or 0) == []
    live = {b: (r.mu, r.sigma, r.matches) for b, r in store.ratings("knaves").items()}
    assert all(n == 6 for _, _, n in live.values())
    store.recompute("knaves")
    assert {b: (r.mu, r.sigma, r.matches) for b, r in store.ratings("knaves").items()} == live
    store.close()
