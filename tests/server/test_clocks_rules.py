"""The move clocks' parts (issue 37: server.match.clocks under mutmut): the wall cap as
docs/protocol.md states it, a cgroup's CPU counter read as seconds, and the lag heartbeat on
a virtual clock whose stalls the test makes by hand."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from server.match.clocks import (
    CLOCK_KINDS,
    LAG_PERIOD_S,
    LAG_TOLERANCE_S,
    CgroupCpuMeter,
    LagMonitor,
    wall_cap,
)
from tests.server.virtual_time import VirtualClock, run_virtual


@pytest.mark.parametrize(
    ("limit", "cap"), [(1.0, 3.0), (0.25, 0.75), (0.1, 0.6), (0.2, 0.7), (0.0, 0.5)]
)
def test_the_wall_cap_is_three_times_the_limit_or_half_a_second_more(
    limit: float, cap: float
) -> None:
    assert wall_cap(limit) == pytest.approx(cap)  # docs/protocol.md: max(3 x limit, limit + 0.5 s)


def test_the_heartbeat_checks_every_5_ms_tolerates_2_ms_and_keeps_its_windows() -> None:
    # docs/protocol.md: "a 5 ms heartbeat"; the window (~10 s) and the report's history.
    assert (LAG_PERIOD_S, LAG_TOLERANCE_S) == (0.005, 0.002)
    assert CLOCK_KINDS == ("cpu", "wall")  # the values of --clock
    lag = LagMonitor(asyncio.new_event_loop())
    assert (lag.samples.maxlen, lag.history.maxlen) == (2000, 200_000)
    lag.loop.close()


def meter_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_v2_cgroup_is_read_from_usage_usec_in_cpu_stat(tmp_path: Path) -> None:
    path = meter_file(tmp_path, "cpu.stat", "nr_periods 0\nusage_usec 1234567\nuser_usec 9\n")
    meter = CgroupCpuMeter(path)
    assert meter.path == path and meter.read() == 1.234567
    with path.open("r+") as f:  # the kernel rewrites it in place: the kept file reads anew
        f.write("usage_usec 2500000\n")
    assert meter.read() == 2.5
    meter.close()


def test_a_v2_cgroup_without_usage_reads_zero(tmp_path: Path) -> None:
    meter = CgroupCpuMeter(meter_file(tmp_path, "cpu.stat", "usage_usecs 5\nuser_usec 7\n"))
    assert meter.read() == 0.0
    meter.close()


def test_a_v1_cgroup_is_read_from_cpuacct_usage_in_nanoseconds(tmp_path: Path) -> None:
    meter = CgroupCpuMeter(meter_file(tmp_path, "cpuacct.usage", "2500000000\n"))
    assert meter.read() == 2.5
    assert not os.get_inheritable(meter._fd)  # a bot's process never inherits it
    meter.close()
    with pytest.raises(OSError):
        os.fstat(meter._fd)
    meter.close()  # twice is once: no error


def test_lateness_under_the_tolerance_is_noted_but_not_counted_as_lag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(clock: VirtualClock) -> None:
        loop = asyncio.get_running_loop()
        lag = LagMonitor(loop)
        assert not lag.running and lag.total_at(loop.time() + 1) == 0.0
        lag.start()
        handle = lag._handle
        lag.start()  # idempotent: still the one heartbeat
        assert lag.running and lag._handle is handle
        await asyncio.sleep(0.0125)  # two beats on time (virtual: exactly)
        assert list(lag.samples) == [0.0, 0.0] and lag.total == 0.0
        for stall in (0.0015, 0.01, 0.003):
            # The loop is blocked this long just before the next beat is due.
            loop.call_at(lag._expected - 1e-6, clock.advance, stall)
            await asyncio.sleep(LAG_PERIOD_S)
        late = [round(s, 6) for s in lag.samples]
        assert late == [0.0, 0.0, 0.001499, 0.009999, 0.002999]
        assert lag.total == pytest.approx(0.01 + 0.003 - 2e-6)
        assert list(lag.history) == list(lag.samples)
        lag.stop()
        assert not lag.running and lag._handle is None
        lag.stop()

    run_virtual(go, monkeypatch)


def test_a_stall_in_progress_counts_once_past_the_tolerance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(clock: VirtualClock) -> None:
        loop = asyncio.get_running_loop()
        lag = LagMonitor(loop)
        lag.start()
        due = lag._expected
        assert lag.total_at(due + 0.0015) == 0.0  # noise
        assert lag.total_at(due + 0.0020) == 0.0
        assert lag.total_at(due + 0.25) == pytest.approx(0.25)
        lag.total = 1.0
        assert lag.total_at(due + 0.25) == pytest.approx(1.25)
        assert lag.total_at(due) == 1.0
        lag.stop()
        assert lag.total_at(due + 0.25) == 1.0  # stopped: no beat is late

    run_virtual(go, monkeypatch)


def test_percentiles_are_of_the_recent_samples_and_clear_only_when_asked() -> None:
    lag = LagMonitor(asyncio.new_event_loop())
    assert lag.percentile(0.5) == 0.0
    lag.samples.extend([0.004, 0.001, 0.003, 0.002])
    lag.history.extend(lag.samples)
    assert [lag.percentile(q) for q in (0.0, 0.25, 0.5, 0.74, 0.75, 1.0)] == [
        0.001,
        0.002,
        0.003,
        0.003,
        0.004,
        0.004,
    ]
    assert lag.percentile(0.99, clear=True) == 0.004
    assert not lag.samples and len(lag.history) == 4
    assert lag.percentile(0.5) == 0.0
    lag.loop.close()
