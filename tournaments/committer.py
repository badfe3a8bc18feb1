"""Release finished matches in schedule order, so ratings never depend on finishing order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class OrderedCommitter(Generic[T]):
    """Buffers finished results and commits them to `commit` in schedule-index order."""

    # Commits happen under the lock so two threads can never commit out of order; it
    # blocks, so an async runner calls finish via asyncio.to_thread. A commit that raises
    # leaves its item buffered at the head for the next finish or flush to try again:
    # harmless, because record_result refuses a match that is already finished.

    def __init__(self, expected: Iterable[int], commit: Callable[[T], object]) -> None:
        """Expect these schedule indices (any order); `commit` receives each item once."""
        self._outstanding = sorted(set(expected))
        self._commit = commit
        self._buffer: dict[int, T] = {}
        self._lock = threading.Lock()
        self._committed = 0

    @property
    def outstanding(self) -> list[int]:
        """Indices not yet committed, lowest first."""
        with self._lock:
            return list(self._outstanding)

    @property
    def buffered(self) -> list[int]:
        """Indices finished but waiting for an earlier one, lowest first."""
        with self._lock:
            return sorted(self._buffer)

    @property
    def committed(self) -> int:
        """How many items have been committed."""
        return self._committed

    def finish(self, index: int, item: T) -> int:
        """Buffer a finished item and commit every item now in order; returns how many."""
        with self._lock:
            if index not in self._outstanding:
                raise ValueError(f"schedule index {index} is not outstanding")
            if index in self._buffer:
                raise ValueError(f"schedule index {index} is already finished")
            self._buffer[index] = item
            return self._release(only_in_order=True)

    def flush(self) -> int:
        """Commit everything buffered in index order despite gaps (when play stops early)."""
        with self._lock:
            return self._release(only_in_order=False)

    def _release(self, *, only_in_order: bool) -> int:
        released = 0
        while self._outstanding:
            head = self._outstanding[0]
            if head not in self._buffer:
                if only_in_order:
                    break
                ready = [i for i in self._outstanding if i in self._buffer]
                if not ready:
                    break
                head = ready[0]
            self._commit(self._buffer[head])
            del self._buffer[head]
            self._outstanding.remove(head)
            self._committed += 1
            released += 1
        return released
