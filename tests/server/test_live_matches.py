"""A running match published in process: the referee tells watchers of every step and nobody
else, and a spectator stays one decision behind and shows nothing while the deal is elsewhere
in play."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from games.registry import get_game
from server.match.live import LIVE, LiveMatch, LiveMatches
from server.match.records import ClockSettings
from server.play.arena import Arena
from server.web.spectate import DELAY, Spectator
from tests.server.conftest import RANDOM_BOT

CLOCK = ClockSettings(move_ms=2000)


async def play(
    tmp_path: Path, match_id: str, watch: pytest.MonkeyPatch | None = None
) -> tuple[int, list[tuple[int, int]]]:
    """Play a Knaves match of random bots, watched if given a monkeypatch (to hear when the
    match registers); returns its decisions and, if watched, (step shown, decisions played)
    at each wake."""
    opened = asyncio.Event()
    if watch is not None:
        real_open = LiveMatches.open

        def open_(self: LiveMatches, key: str, live: LiveMatch) -> None:
            real_open(self, key, live)
            opened.set()

        watch.setattr(LiveMatches, "open", open_)
    seen: list[tuple[int, int]] = []
    async with Arena(log_dir=tmp_path) as arena:
        tokens = [arena.register(f"b{i}") for i in range(3)]
        for i, token in enumerate(tokens):
            await arena.spawn(f"b{i}", RANDOM_BOT, token)
        bots = [arena.identity(t) for t in tokens]
        game = asyncio.create_task(
            arena.play("knaves", bots, seed=2, clock=CLOCK, match_id=match_id)
        )
        if watch is not None:
            await opened.wait()
            with LIVE.watch(match_id) as live:
                assert live is not None
                spectator = Spectator(live)
                while not live.over:
                    changed = live.next_change()
                    spectator.advance()
                    seen.append((spectator.step, len(live.actions)))
                    await changed.wait()
        record = await game
    assert record.status == "finished", record.reason
    assert match_id not in LIVE
    return len(record.actions), seen


def test_nobody_watching_costs_no_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[int] = []
    real = LiveMatch.step
    monkeypatch.setattr(LiveMatch, "step", lambda self: (steps.append(1), real(self))[1])
    decisions, _ = asyncio.run(play(tmp_path, "unwatched"))
    assert decisions > 100
    assert len(steps) == 1  # the end only


def test_a_watcher_is_woken_each_step_and_stays_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decisions, seen = asyncio.run(play(tmp_path, "watched", monkeypatch))
    assert len(seen) > decisions // 2  # woken step by step, not only at the end
    assert all(step == max(0, table - DELAY) for step, table in seen)
    assert DELAY >= 1 and all(step < table for step, table in seen if table)  # always behind


def test_a_deal_played_elsewhere_shows_only_the_step() -> None:
    game = get_game("knaves")
    state = game.new_match(4, 3)
    actions: list[str] = []
    for _ in range(10):
        action = game.legal_actions(state)[0]
        actions.append(action.id)
        game.apply(state, action)
    spectator = Spectator(LiveMatch(game, 4, 3, game.spec.resolve(None), actions))
    spectator.advance()
    hidden = spectator.snapshot(public=False, first=0)
    assert hidden["step"] == 10 - DELAY < 10
    assert hidden["moves"] == [] and hidden["to_act"] is None and hidden["scores"] is None
    assert hidden["table"] is None and hidden["hand_ended"] is None
    shown = spectator.snapshot(public=True, first=3)
    assert [m["label"] for m in shown["moves"]] == actions[3 : 10 - DELAY]
