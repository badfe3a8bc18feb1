"""A controllable clock for in-process referee tests (issue 32 item 5): an event loop on
virtual time. When nothing is ready, time jumps to the loop's next timer instead of waiting
for it, so a 2 s move clock runs out at once and every duration a test reads is exact. The
referee's and the hub's `time.monotonic()` read the same clock. Bytes still cross real
socket pairs: the selector looks at them (without waiting) before any jump."""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any, TypeVar

import pytest

from server.match import hub, runner

T = TypeVar("T")
STUCK_S = 5.0  # real seconds a loop with no timer waits for bytes before the test fails
# Virtual seconds a test may last: past this the code under test is stuck (a heartbeat alone
# would otherwise jump the clock forever), and the test fails at once.
VIRTUAL_LIMIT_S = 900.0
MAX_TURNS = 2_000_000  # turns of the loop a test may take: more is a loop spinning in place


class VirtualClock:
    """Seconds that pass only when the loop jumps or the test moves them."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def monotonic(self) -> float:
        """The time now (stands in for time.monotonic)."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Let seconds pass."""
        self.now += seconds

    def __getattr__(self, name: str) -> Any:
        """The time module's other functions (time.time, ...), as they are."""
        return getattr(time, name)


class JumpSelector(selectors.BaseSelector):
    """The loop's selector: what is ready now, else a jump of the clock to the timeout."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.inner = selectors.DefaultSelector()
        self.end = clock.now + VIRTUAL_LIMIT_S
        self.turns = 0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """As the real selector."""
        return self.inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        """As the real selector."""
        return self.inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """As the real selector."""
        return self.inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Ready descriptors now; if none, the clock jumps by timeout (no real wait)."""
        self.turns += 1
        if self.turns > MAX_TURNS:
            raise RuntimeError(f"stuck: {MAX_TURNS} turns of the loop")
        events = self.inner.select(0)
        if events or (timeout is not None and timeout <= 0):
            return events
        if timeout is None:  # no timer: only bytes from this process can come, and have not
            events = self.inner.select(STUCK_S)
            if not events:
                raise RuntimeError("the virtual loop has nothing to wait for")
            return events
        self.clock.advance(timeout)
        if self.clock.now > self.end:
            raise RuntimeError(f"stuck: {VIRTUAL_LIMIT_S:g} s of virtual time have passed")
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        """As the real selector."""
        return self.inner.get_map()

    def close(self) -> None:
        """As the real selector."""
        self.inner.close()


class VirtualLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop with its time read from a VirtualClock."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(JumpSelector(clock))
        self.clock = clock

    def time(self) -> float:
        """The virtual time."""
        return self.clock.now


MODULES: tuple[ModuleType, ...] = (runner, hub)  # whose time.monotonic is the virtual clock


def run_virtual(main: Callable[[VirtualClock], Awaitable[T]], monkeypatch: pytest.MonkeyPatch) -> T:
    """Run main on a virtual-time loop; the referee and the hub read its clock."""
    clock = VirtualClock()
    for module in MODULES:
        monkeypatch.setattr(module, "time", clock)

    async def go() -> T:
        return await main(clock)

    with asyncio.Runner(loop_factory=lambda: VirtualLoop(clock)) as loop_runner:
        return loop_runner.run(go())
