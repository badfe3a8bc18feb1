"""A match in play published through the store for web pages in other processes: every
snapshot the player writes holds only what the in-process spectator may show (the checks of
test_what_the_public_sees.py, run on each stored snapshot), the writes are throttled and one at
a time, and the snapshot is gone once the match ends."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from games.registry import get_game
from server.match.live import LIVE
from server.match.records import ClockSettings
from server.play import publish
from server.play.arena import Arena
from server.play.one_match import play_until_not_voided
from server.views.spectator import shown
from tests.server.conftest import PYTHON, ROOT
from tests.server.test_what_the_public_sees import check_shown, public_truth
from tournaments.store import Store

CLOCK = ClockSettings(move_ms=2000)
# 4 ms a decision: a match lasts long enough for several snapshots however loaded the machine
BRISK_BOT = [PYTHON, str(ROOT / "tests" / "server" / "bots" / "brisk_bot.py")]
# (game, seats, seed): every game, a seeded match each
CASES = [("knaves", 3, 1), ("knives", 5, 2), ("kill", 4, 3), ("kansas-city", 4, 4),
         ("ninja-whist", 4, 5)]  # fmt: skip


async def play_published(
    store: Store, tmp_path: Path, game: str, seats: int, seed: int
) -> tuple[int, list[str]]:
    """Play a stored match of seeded bots with the store as a run would: its id and
    actions."""
    ids = [store.add_bot(f"r{i}")[0].id or 0 for i in range(seats)]
    tournament = store.create_tournament(game, ids, seed=seed)
    match = store.matches(tournament.id or 0)[0]
    async with Arena(log_dir=tmp_path) as arena:
        identities = {}
        for bot in ids:
            token = arena.register(f"r{bot}")
            await arena.spawn(f"r{bot}", BRISK_BOT, token)
            identities[bot] = arena.identity(token)
        record = await play_until_not_voided(
            store, arena, match, identities, CLOCK, tournament=tournament
        )
    assert record.status == "finished", record.reason
    return match.id or 0, record.actions


@pytest.mark.parametrize(("game", "seats", "seed"), CASES, ids=[c[0] for c in CASES])
def test_every_stored_snapshot_holds_only_what_the_public_may_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game: str, seats: int, seed: int
) -> None:
    monkeypatch.setattr(publish, "PUBLISH_S", 0.02)  # write often
    written: list[tuple[int, dict[str, Any]]] = []  # (decisions played then, snapshot)
    in_flight = threading.Semaphore(1)
    real = Store.publish_live

    def spy(self: Store, match_id: int, step: int, data: dict[str, Any]) -> None:
        assert in_flight.acquire(blocking=False), "a snapshot written while another was"
        try:
            live = LIVE.get(str(match_id))
            assert live is not None and step == data["step"]
            written.append((len(live.actions), json.loads(json.dumps(data))))
            real(self, match_id, step, data)
        finally:
            in_flight.release()

    monkeypatch.setattr(Store, "publish_live", spy)
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        mid, actions = asyncio.run(play_published(store, tmp_path, game, seats, seed))
        assert store.read_live(mid).snapshot is None  # gone with the match
        detail = store.match_detail(mid)
    labels, views, hidden, ended = public_truth(
        get_game(game), detail.match.seed, seats, detail.tournament.options, actions
    )
    assert len(written) >= 5, f"{len(written)} snapshot(s) of {len(actions)} decisions"
    steps = [data["step"] for _, data in written]
    assert steps == sorted(set(steps))  # each written once, in order
    for table, data in written:
        check_shown(shown(data, True, 0), table, labels, views, hidden, ended)
        assert set(data) == {"step", "to_act", "scores", "moves", "table", "hand_ended"}
