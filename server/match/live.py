"""Running matches as spectators see them, published in process from the referee to the web page.

The referee opens a LiveMatch when a match starts and closes it at the end; after each applied
action it calls `step()` only while someone watches, so an unwatched match pays one integer test
per decision. Everything runs on the referee's event loop: no locks. What a spectator may see
of a step (public labels, a delay) is the web layer's business, not the referee's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.base import Game


@dataclass
class LiveMatch:
    """One running match: its engine and settings, and the action ids applied so far (the
    referee's own list, read only)."""

    game: Game[Any]
    seed: int
    seats: int
    options: Mapping[str, Any]
    actions: Sequence[str]
    watchers: int = 0
    over: bool = False
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def step(self) -> None:
        """Wake every watcher: an action was applied (or the match ended)."""
        self._changed.set()
        self._changed = asyncio.Event()

    def next_change(self) -> asyncio.Event:
        """The event the next `step()` sets."""
        return self._changed


class LiveMatches:
    """The running matches of this process, by match id."""

    def __init__(self) -> None:
        self._matches: dict[str, LiveMatch] = {}

    def open(self, match_id: str, live: LiveMatch) -> None:
        """Publish a match that starts now."""
        self._matches[match_id] = live

    def get(self, match_id: str) -> LiveMatch | None:
        """The running match, None if it runs nowhere in this process (nothing is woken for
        a reader that polls: it reads the actions at its own pace)."""
        return self._matches.get(match_id)

    def __contains__(self, match_id: object) -> bool:
        return match_id in self._matches

    def close(self, match_id: str, live: LiveMatch) -> None:
        """The match ended: watchers are woken once more and see it over."""
        live.over = True
        if self._matches.get(match_id) is live:
            del self._matches[match_id]
        live.step()

    @contextlib.contextmanager
    def watch(self, match_id: str) -> Iterator[LiveMatch | None]:
        """While inside, the running match (None if it runs nowhere in this process) is told
        after every step."""
        live = self._matches.get(match_id)
        if live is None:
            yield None
            return
        live.watchers += 1
        try:
            yield live
        finally:
            live.watchers -= 1


LIVE = LiveMatches()  # the process's registry: `serve` runs the referee and the web page together
