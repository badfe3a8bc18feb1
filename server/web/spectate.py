"""A running match watched step by step: the public table, one decision behind the players.

A spectator may be a seated bot's author, or the bot itself, so the stream shows only what every
seat already knows: moves by their public labels, whose turn it is and the scores, always at
least DELAY decisions behind the table, never a hand. While another rotation of the same deal is
still to be played even that stays hidden (its moves, even the order of turns, would give away
the deal): only the step count moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

from server.match.live import LiveMatch, LiveMatches
from server.web.live import RETRY_MS, STREAM_S, Pulse

DELAY = 1  # decisions a spectator stays behind the table


class Spectator:
    """One watcher's own replay of a running match, advanced only as far as may be shown."""

    def __init__(self, live: LiveMatch) -> None:
        self.live = live
        self.state = live.game.new_match(live.seed, live.seats, live.options)
        self.moves: list[dict[str, Any]] = []

    @property
    def step(self) -> int:
        """How many actions this spectator has seen."""
        return len(self.moves)

    def advance(self) -> None:
        """Apply the actions the table is at least DELAY decisions past."""
        game, actions = self.live.game, self.live.actions
        for action in actions[self.step : max(0, len(actions) - DELAY)]:
            seat = game.to_act(self.state)
            self.moves.append({"seat": seat, "label": game.public_label(self.state, action)})
            game.apply(self.state, action)

    def snapshot(self, public: bool, first: int) -> dict[str, Any]:
        """The shown step, with the moves from index `first` (none unless public)."""
        game = self.live.game
        return {
            "state": "running",
            "step": self.step,
            "to_act": game.to_act(self.state) if public else None,  # who won a trick: the deal
            "public": public,
            "scores": game.scores(self.state) if public else None,
            "first": first,
            "moves": self.moves[first:] if public else [],
        }


def spectate(
    lives: LiveMatches,
    pulse: Pulse,
    match_id: int,
    deal_elsewhere: Callable[[], bool],
    ended: Callable[[], bool],
) -> EventSourceResponse:
    """The event stream of a running match: a `step` event per shown step, and `over` once the
    store has its end (the page then reloads into the replay, where the deal allows it).

    deal_elsewhere and ended query the store (they run in a thread)."""
    key = str(match_id)

    def event(data: dict[str, Any]) -> ServerSentEvent:
        return ServerSentEvent(json.dumps(data), event="step", retry=RETRY_MS)

    async def events() -> AsyncIterator[ServerSentEvent]:
        loop = asyncio.get_running_loop()
        end = loop.time() + STREAM_S
        public = not await asyncio.to_thread(deal_elsewhere)
        told = False  # the page knows the match is or was playing, or is told it waits
        with lives.watch(key) as live:
            if live is not None and not live.over:
                told = True
                spectator = Spectator(live)
                sent = -1
                while not live.over:
                    changed = live.next_change()
                    spectator.advance()
                    if spectator.step != sent:
                        yield event(spectator.snapshot(public, max(sent, 0)))
                        sent = spectator.step
                    left = end - loop.time()
                    if left <= 0:
                        return
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(changed.wait(), left)
                    if not changed.is_set():
                        return
        # Over, not started here yet, or played by another process: wait for the store.
        async with pulse.listen() as next_change:
            while True:
                changed = next_change()
                if await asyncio.to_thread(ended):
                    yield event({"state": "over"})
                    return
                if not told:
                    told = True
                    yield event({"state": "waiting"})
                if key in lives:
                    return  # it started here: the browser reconnects and watches it
                left = end - loop.time()
                if left <= 0:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), left)
                if not changed.is_set():
                    return

    return EventSourceResponse(events(), ping=15)
