"""A match in play published through the store, so that a web page in any process follows it.

While its runner plays, a LivePublisher reads the match's actions every PUBLISH_S (from the
process's registry of running matches, server/match/live.py: a reader that polls wakes
nothing in the runner), advances its own spectator (server/views/spectator.py: the public
table, a decision behind, the moves by their public labels) and writes the snapshot when it
moved, one write at a time: while a write is under way the next tick skips, so a slow database
never queues writes nor holds up play, and a match writes at most 1/PUBLISH_S times a second.
When the attempt ends the snapshot is removed; the replay takes over.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from server.match.live import LIVE, LiveMatches
from server.views.spectator import Spectator

PUBLISH_S = 0.25  # a match's snapshot is written at most this often

log = logging.getLogger(__name__)

Write = Callable[..., "asyncio.Future[Any]"]


class LiveSink(Protocol):
    """Where snapshots go: the store, or a referee process's channel to the run."""

    def publish_live(self, match_id: int, step: int, data: dict[str, Any]) -> None:
        """Replace the match's snapshot."""

    def clear_live(self, match_id: int) -> None:
        """Remove the match's snapshot."""


class LivePublisher:
    """Publishes one match attempt's public snapshots while it is played (start, then stop)."""

    def __init__(
        self,
        store: LiveSink,
        match_id: int,
        write: Write,
        lives: LiveMatches = LIVE,
        every_s: float | None = None,
    ) -> None:
        self.store = store
        self.match_id = match_id
        self._write = write
        self._lives = lives
        self._every_s = PUBLISH_S if every_s is None else every_s
        self._task: asyncio.Task[None] | None = None
        self._pending: asyncio.Future[Any] | None = None
        self.published = 0  # snapshots written

    def start(self) -> None:
        """Publish from now on, on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop publishing and remove the snapshot, after the write under way if any."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            if self._pending is not None:
                with contextlib.suppress(Exception):
                    await self._pending
            if self.published:
                await self._write(self.store.clear_live, self.match_id)
        except Exception:  # the store's own trouble shows in the run's writes; never here
            log.warning("match %s: its live snapshot was not removed", self.match_id, exc_info=True)

    async def _run(self) -> None:
        key = str(self.match_id)
        spectator: Spectator | None = None
        shown = -1  # the step last written
        while True:
            await asyncio.sleep(self._every_s)
            live = self._lives.get(key)
            if live is None:
                continue  # not seated yet
            if spectator is None or spectator.live is not live:
                spectator = Spectator(live)
            if self._pending is not None and not self._pending.done():
                continue  # the last write is under way: the next tick carries this step too
            spectator.advance()
            if spectator.step == shown:
                continue
            # A copy (lists, not the spectator's own) for the writer's thread.
            data = json.loads(json.dumps(spectator.published()))
            shown = spectator.step
            self._pending = self._write(self.store.publish_live, self.match_id, shown, data)
            self._pending.add_done_callback(self._failed)
            self.published += 1

    def _failed(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.warning(
                "match %s: a live snapshot was not written: %s", self.match_id, future.exception()
            )
