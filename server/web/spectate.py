"""A running match watched step by step, wherever it is played: what a spectator may see is
server/views/spectator.py's business; this is the stream that carries it.

A match played in this process (`cardshark serve`) is followed from its runner as each action
is applied; one played by another process (`cardshark worker`, a `cardshark tournament run`)
from the snapshot that process publishes in the store (server/play/publish.py), read every
STORE_POLL_S while someone watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

from server.match.live import LiveMatches
from server.views.spectator import DELAY, Spectator, shown
from server.web.live import RETRY_MS, STREAM_S
from tournaments.store import LiveRead

STORE_POLL_S = 0.5  # how often a watcher of a match played elsewhere reads its snapshot

__all__ = ["DELAY", "STORE_POLL_S", "Spectator", "spectate"]


def spectate(
    lives: LiveMatches,
    match_id: int,
    deal_elsewhere: Callable[[], bool],
    read: Callable[[], tuple[bool, LiveRead]],
    poll_s: float = STORE_POLL_S,
) -> EventSourceResponse:
    """The event stream of a running match: a `step` event per shown step, and `over` once the
    store has its end (the page then reloads into the replay, where the deal allows it).

    deal_elsewhere and read query the store (they run in a thread); read gives whether the
    match is over and its published snapshot."""
    key = str(match_id)

    def event(data: dict[str, Any]) -> ServerSentEvent:
        return ServerSentEvent(json.dumps(data), event="step", retry=RETRY_MS)

    async def events() -> AsyncIterator[ServerSentEvent]:
        loop = asyncio.get_running_loop()
        end = loop.time() + STREAM_S
        public = not await asyncio.to_thread(deal_elsewhere)
        told = False  # the page knows the match is or was playing, or is told it waits
        sent = -1
        with lives.watch(key) as live:
            if live is not None and not live.over:
                told = True
                spectator = Spectator(live)
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
        # Over, not started yet, or played by another process: its snapshots, then its end.
        while True:
            over, found = await asyncio.to_thread(read)
            if over:
                yield event({"state": "over"})
                return
            published = found.snapshot
            if published is not None and published["step"] > sent:
                yield event(shown(published, public, max(sent, 0)))
                sent, told = published["step"], True
            elif not told:
                told = True
                yield event({"state": "waiting"})
            if key in lives:
                return  # it started here: the browser reconnects and watches it
            left = end - loop.time()
            if left <= 0:
                return
            await asyncio.sleep(min(poll_s, left))

    return EventSourceResponse(events(), ping=15)
