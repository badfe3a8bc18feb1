"""Live pages by server-sent events: one poll of the store per second while anyone watches,
and each watcher gets a fresh snapshot only when that poll sees something change."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

POLL_S = 1.0
STREAM_S = 30.0  # a stream ends after this and the browser reconnects: shutdown never waits
RETRY_MS = 1000  # how soon the browser reconnects


class Pulse:
    """Watches a fingerprint of the store; wakes every listener when it changes."""

    def __init__(self, read: Callable[[], object], poll_s: float = POLL_S) -> None:
        self._read = read
        self._poll_s = poll_s
        self._listeners = 0
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.version = 0

    async def _poll(self) -> None:
        last = await run_in_threadpool(self._read)
        while self._listeners:
            await asyncio.sleep(self._poll_s)
            now = await run_in_threadpool(self._read)
            if now != last:
                last = now
                self.version += 1
                self._changed.set()
                self._changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[Callable[[], asyncio.Event]]:
        """While inside, the store is polled; yields a getter of the next change's event."""
        self._listeners += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._poll())
        try:
            yield lambda: self._changed
        finally:
            self._listeners -= 1


def stream(pulse: Pulse, snapshot: Callable[[], dict[str, Any]], event: str) -> EventSourceResponse:
    """An event stream sending `snapshot()` (computed in a thread) now and after each change."""

    async def events() -> AsyncIterator[ServerSentEvent]:
        loop = asyncio.get_running_loop()
        end = loop.time() + STREAM_S
        async with pulse.listen() as next_change:
            while True:
                changed = next_change()
                data = await run_in_threadpool(snapshot)
                yield ServerSentEvent(json.dumps(data), event=event, retry=RETRY_MS)
                left = end - loop.time()
                if left <= 0:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), left)
                if not changed.is_set():
                    return

    return EventSourceResponse(events(), ping=15)
