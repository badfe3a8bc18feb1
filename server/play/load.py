"""Matches in flight that fit the machine: an adaptive limit and a fault-storm detector.

The runner never lets the server's load decide a result: it lowers the number of matches in
flight while its own loop lags (and raises it again when it can), and a match whose timeouts
came in a storm — several different bots at once — is voided and replayed, never rated.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Iterable

MATCHES_PER_CORE = 2  # a match is mostly round trips: two per core keep the cores busy
LAG_HIGH_S = 0.010  # p90 loop lag above this: halve the matches in flight
LAG_LOW_S = 0.002  # below this: one more, up to what was asked
STORM_WINDOW_S = 5.0  # timeouts of different bots within this long make a storm...
STORM_BOTS = 3  # ...when this many different bots time out


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def fitting_concurrency() -> int:
    """Matches in flight this machine serves without making bots wait for a core."""
    return max(1, MATCHES_PER_CORE * cores())


def concurrency_warning(asked: int, seats: int) -> str | None:
    """One line when asked exceeds what fits, naming the figures; None when it fits."""
    fit = fitting_concurrency()
    if asked <= fit:
        return None
    return (
        f"warning: --concurrency {asked} is more than {cores()} cores serve well "
        f"({fit} matches at once; {asked} x {seats} seats = {asked * seats} bot seats in "
        f"flight); the runner lowers it while its own lag is high"
    )


class AdaptiveLimit:
    """At most `limit` holders at once; the limit moves between 1 and `ceiling`."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.in_flight = 0
        self.lowest = self.ceiling
        self.crowding = 0  # times a holder entered beside another: a match alone sees none
        # Who waits for a place, first come first served: a freed place is handed to the
        # first (waking every waiter at every end cost O(matches) a match, and woken waiters
        # that found no place went to the back of the line, out of schedule order).
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> AdaptiveLimit:
        if self.in_flight < self.limit and not self._waiting:
            self._enter()
        else:
            await self._wait(first=False)
        return self

    def _enter(self) -> None:
        self.in_flight += 1
        if self.in_flight > 1:
            self.crowding += 1

    async def _wait(self, *, first: bool) -> None:
        """Wait in line (at its head if first) until a place is handed over."""
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if first:
            self._waiting.appendleft(place)
        else:
            self._waiting.append(place)
        try:
            await place
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():  # handed a place it will not use
                self.in_flight -= 1
                self._hand_over()
            elif place in self._waiting:  # not yet passed over by a hand-over
                self._waiting.remove(place)
            raise

    def _hand_over(self) -> None:
        """Give the places under the limit to those first in line."""
        while self._waiting and self.in_flight < self.limit:
            place = self._waiting.popleft()
            if not place.done():
                self._enter()
                place.set_result(None)

    def alone_since(self, crowding: int) -> bool:
        """True if one holder has been alone since crowding was read (and is now)."""
        return self.in_flight <= 1 and self.crowding == crowding

    async def __aexit__(self, *exc: object) -> None:
        self.in_flight -= 1
        self._hand_over()

    async def requeue(self) -> None:
        """Give the held place back and wait, first in line, for one under the (lowered)
        limit again."""
        self.in_flight -= 1
        self._hand_over()
        if self.in_flight < self.limit and not self._waiting:
            self._enter()
        else:
            await self._wait(first=True)

    def shrink(self) -> None:
        """Halve the limit (at least 1): holders over it finish, none start until under."""
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)

    async def grow(self) -> None:
        """One more, up to the ceiling."""
        if self.limit < self.ceiling:
            self.limit += 1
            self._hand_over()

    async def follow(self, lag_p90: Callable[[], float], period_s: float = 0.25) -> None:
        """Every period, adjust to the loop's recent p90 lag, until cancelled."""
        while True:
            await asyncio.sleep(period_s)
            lag = lag_p90()
            if lag > LAG_HIGH_S:
                self.shrink()
            elif lag < LAG_LOW_S:
                await self.grow()


class StormWatch:
    """Tells a storm of the server's load from one slow bot, by who timed out when.

    Fed as timeouts are charged (`note`), not as matches end: a match that ends early must
    still see the timeouts its neighbours are charged in the same wave.
    """

    def __init__(self) -> None:
        self._recent: deque[tuple[float, str]] = deque(maxlen=10_000)

    def note(self, bot: str, now: float | None = None) -> None:
        """A timeout was just charged to bot."""
        self._recent.append((time.monotonic() if now is None else now, bot))

    def is_storm(self, timed_out: Iterable[str], now: float | None = None) -> bool:
        """True if a match whose bots `timed_out` met a storm: many bots timed out at once."""
        mine = set(timed_out)
        if not mine:
            return False
        now = time.monotonic() if now is None else now
        while self._recent and self._recent[0][0] < now - STORM_WINDOW_S:
            self._recent.popleft()
        return len(mine | {bot for _, bot in self._recent}) >= STORM_BOTS
