"""Fair move clocks: the server's own lag, a managed bot's CPU time, and the wall-time cap.

A bot is promised its move time on a clock that counts only what is its own: for a managed
bot in the sandbox, the CPU its processes used while the request was open; for any other bot,
wall time less the referee's own lag while the request was open. Either way, a request is cut
off once `wall_cap(limit)` of wall time has passed (docs/protocol.md, "Clocks").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from pathlib import Path
from typing import Protocol

CLOCK_KINDS = ("cpu", "wall")
WALL_CAP_FACTOR = 3.0  # the cap is this multiple of the move time...
WALL_CAP_FLOOR_S = 0.5  # ...or the move time plus this, whichever is longer
LAG_PERIOD_S = 0.005  # how often the referee checks how late its own loop runs
LAG_TOLERANCE_S = 0.002  # lateness below this is scheduling noise, not lag
LAG_WINDOW = 2000  # recent lateness samples kept for percentiles (~10 s at full lag)
LAG_HISTORY = 200_000  # samples kept for a run's report (~17 min of heartbeats)


def wall_cap(limit_s: float) -> float:
    """The longest wall time a request may stay open, however its clock runs."""
    return max(limit_s * WALL_CAP_FACTOR, limit_s + WALL_CAP_FLOOR_S)


class CpuMeter(Protocol):
    """CPU seconds a bot's processes have used so far."""

    def read(self) -> float:
        """Seconds of CPU since the bot started."""


class CgroupCpuMeter:
    """A bot's CPU time from its cgroup (v1 `cpuacct.usage` in ns, v2 `cpu.stat` usage_usec)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._v2 = path.name == "cpu.stat"
        self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)

    def read(self) -> float:
        """Seconds of CPU (a positioned read of a kept-open file: a few µs)."""
        data = os.pread(self._fd, 256, 0)
        if self._v2:
            for line in data.split(b"\n"):
                if line.startswith(b"usage_usec "):
                    return int(line.split()[1]) / 1e6
            return 0.0
        return int(data) / 1e9

    def close(self) -> None:
        """Let go of the file."""
        with contextlib.suppress(OSError):
            os.close(self._fd)


class LagMonitor:
    """How late the referee's own event loop runs: a heartbeat that notes its lateness."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.total = 0.0  # seconds of lag seen so far
        self.samples: deque[float] = deque(maxlen=LAG_WINDOW)
        self.history: deque[float] = deque(maxlen=LAG_HISTORY)  # never cleared: for reports
        self._expected = 0.0
        self._handle: asyncio.TimerHandle | None = None

    @property
    def running(self) -> bool:
        """True while the heartbeat runs."""
        return self._handle is not None

    def start(self) -> None:
        """Start the heartbeat (idempotent)."""
        if self._handle is None:
            self._expected = self.loop.time() + LAG_PERIOD_S
            self._handle = self.loop.call_at(self._expected, self._beat)

    def stop(self) -> None:
        """Stop the heartbeat."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _beat(self) -> None:
        now = self.loop.time()
        late = now - self._expected
        self.samples.append(late)
        self.history.append(late)
        if late > LAG_TOLERANCE_S:
            self.total += late
        self._expected = now + LAG_PERIOD_S
        self._handle = self.loop.call_at(self._expected, self._beat)

    def total_at(self, now: float) -> float:
        """Lag so far, including a stall in progress that the heartbeat has not seen yet."""
        stalled = now - self._expected if self._handle is not None else 0.0
        return self.total + (stalled if stalled > LAG_TOLERANCE_S else 0.0)

    def percentile(self, q: float, *, clear: bool = False) -> float:
        """The q-quantile (0..1) of recent lateness, in seconds (then forgotten, if clear)."""
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        if clear:
            self.samples.clear()
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
