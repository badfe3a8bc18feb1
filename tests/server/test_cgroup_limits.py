"""A managed bot's limits as cgroup files and prlimit flags, read in the pytest process.

The cgroup trees here are directories of tmp_path standing in for /sys/fs/cgroup (v1 and v2),
so every file a bot's group gets is read back exactly; tests/server/test_sandbox.py and
test_seams.py check the real ones from inside a launched bot.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from server.bots import cgroups
from server.bots.cgroups import BotCgroups, BotLimits
from server.match.clocks import CgroupCpuMeter


def test_rlimits_always_and_the_cgroups_limits_only_where_no_cgroup_holds_them() -> None:
    limits = BotLimits(memory_mb=3, pids=4, cpu_s=5, open_files=6, file_size_mb=7)
    assert limits.prlimit_args(frozenset()) == [
        "--nofile=6",
        f"--fsize={7 << 20}",
        "--cpu=5",
        f"--as={3 << 20}",
        "--nproc=4",
    ]
    assert limits.prlimit_args(frozenset({"memory", "pids"})) == [
        "--nofile=6",
        f"--fsize={7 << 20}",
        "--cpu=5",
    ]
    assert limits.prlimit_args(frozenset({"pids"})) == [
        "--nofile=6",
        f"--fsize={7 << 20}",
        "--cpu=5",
        f"--as={3 << 20}",
    ]
    none = BotLimits(memory_mb=0, pids=0, cpu_s=0, open_files=1, file_size_mb=0)
    assert none.prlimit_args(frozenset()) == ["--nofile=1"]  # 0: no limit
    assert BotLimits() == BotLimits(1024, 64, 0, 256, 64, 64, ())


@pytest.fixture
def no_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own bot groups are not these tests' to sweep."""
    monkeypatch.setattr(cgroups, "_swept", True)


def tree(monkeypatch: pytest.MonkeyPatch, version: str, roots: dict[str, Path]) -> None:
    monkeypatch.setattr(cgroups, "cgroup_root", lambda: (version, roots))


def test_a_v2_group_holds_memory_and_pids_and_counts_cpu(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mine = tmp_path / "cardshark"
    tree(monkeypatch, "v2", {"memory": mine, "pids": mine, "cpuacct": mine})
    group = BotCgroups("42-7", BotLimits(memory_mb=5, pids=9))
    bot = mine / "42-7"
    assert group.dirs == {"memory": bot, "pids": bot, "cpuacct": bot}
    assert group.kinds == frozenset({"memory", "pids", "cpuacct"})
    assert (mine / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (bot / "memory.max").read_text() == str(5 << 20)
    assert (bot / "pids.max").read_text() == "9"
    assert not (bot / "memory.swappiness").exists()
    assert group.procs_files() == [str(bot / "cgroup.procs")]
    assert group.cpu_meter() is None  # no cpu.stat to read
    (bot / "cpu.stat").write_text("usage_usec 2500000\n")
    meter = group.cpu_meter()
    assert isinstance(meter, CgroupCpuMeter) and meter.path == bot / "cpu.stat"
    assert meter.read() == 2.5
    meter.close()


def test_a_v1_group_per_controller_with_no_swap_and_its_cores(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    roots = {k: tmp_path / k / "cardshark" for k in ("memory", "pids", "cpuacct", "cpuset")}
    (tmp_path / "cpuset").mkdir()
    (tmp_path / "cpuset" / "cpuset.cpus").write_text("0-3\n")
    (tmp_path / "cpuset" / "cpuset.mems").write_text("0\n")
    roots["cpuset"].mkdir()
    (roots["cpuset"] / "cpuset.cpus").write_text("\n")  # a new group has no cores yet
    (roots["cpuset"] / "cpuset.mems").write_text("")
    tree(monkeypatch, "v1", roots)
    group = BotCgroups("42-1", BotLimits(memory_mb=6, pids=8, cpus=(1, 3)))
    bots = {k: r / "42-1" for k, r in roots.items()}
    assert group.dirs == bots
    assert (bots["memory"] / "memory.limit_in_bytes").read_text() == str(6 << 20)
    assert (bots["memory"] / "memory.swappiness").read_text() == "0"
    assert not (bots["memory"] / "memory.max").exists()
    assert (bots["pids"] / "pids.max").read_text() == "8"
    # The parent gets its parent's cores and memory nodes first, then the bot its own.
    assert (roots["cpuset"] / "cpuset.cpus").read_text() == "0-3"
    assert (roots["cpuset"] / "cpuset.mems").read_text() == "0"
    assert (bots["cpuset"] / "cpuset.cpus").read_text() == "1,3"
    assert (bots["cpuset"] / "cpuset.mems").read_text() == "0"
    assert not (tmp_path / "memory" / "cardshark" / "cgroup.subtree_control").exists()
    assert group.procs_files() == sorted(str(d / "cgroup.procs") for d in bots.values())
    (bots["cpuacct"] / "cpuacct.usage").write_text("1500000000\n")
    meter = group.cpu_meter()
    assert meter is not None and meter.path == bots["cpuacct"] / "cpuacct.usage"
    assert meter.read() == 1.5
    meter.close()


def test_without_cores_given_a_bot_gets_those_of_its_starter(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "cpuset" / "cardshark"
    root.mkdir(parents=True)
    (root / "cpuset.cpus").write_text("0-7")
    (root / "cpuset.mems").write_text("0-1")
    tree(monkeypatch, "v1", {"cpuset": root})
    # This process is pinned (a worker's core); other processes are not.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {6, 2} if pid == 0 else {0, 1})
    group = BotCgroups("9-0", BotLimits())
    assert (root / "9-0" / "cpuset.cpus").read_text() == "2,6"
    assert (root / "9-0" / "cpuset.mems").read_text() == "0-1"
    assert (root / "cpuset.cpus").read_text() == "0-7"  # the parent's: left as it was
    assert group.cpu_meter() is None and group.kinds == frozenset({"cpuset"})


def test_a_controller_that_refuses_a_limit_or_a_group_is_not_counted_on(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    roots = {k: tmp_path / k / "cardshark" for k in ("memory", "pids", "cpuacct")}
    (roots["memory"] / "7-0" / "memory.limit_in_bytes").mkdir(parents=True)  # unwritable
    (roots["memory"] / "7-0" / "memory.swappiness").mkdir()  # a v1 without it: no matter
    (tmp_path / "cpuacct").write_text("")  # no group can be made under a file
    tree(monkeypatch, "v1", roots)
    group = BotCgroups("7-0", BotLimits(memory_mb=1, pids=2))
    assert group.dirs == {"pids": roots["pids"] / "7-0"}
    assert BotLimits(memory_mb=1, pids=2).prlimit_args(group.kinds)[-1] == f"--as={1 << 20}"
    # A limit of 0 is no limit: nothing written.
    free = BotCgroups("7-1", BotLimits(memory_mb=0, pids=0))
    assert free.dirs == {"memory": roots["memory"] / "7-1", "pids": roots["pids"] / "7-1"}
    assert not (roots["pids"] / "7-1" / "pids.max").exists()
    assert not (roots["memory"] / "7-1" / "memory.limit_in_bytes").exists()
    assert not (roots["memory"] / "7-1" / "memory.swappiness").exists()


def test_kill_all_kills_every_process_left_and_removes_the_groups(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    roots = {k: tmp_path / k / "cardshark" for k in ("memory", "pids")}
    tree(monkeypatch, "v1", roots)
    group = BotCgroups("5-0", BotLimits(memory_mb=0, pids=0))
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        procs = roots["memory"] / "5-0" / "cgroup.procs"
        procs.write_text(f"{sleepers[0].pid}\n{sleepers[1].pid}\n")
        assert group.pids() == {p.pid for p in sleepers}
        calls = []
        real = group.pids

        def emptied() -> set[int]:  # the kernel empties a group of its dead
            calls.append(1)
            if len(calls) > 1:
                procs.write_text("")
            return real()

        monkeypatch.setattr(group, "pids", emptied)
        group.kill_all()
        assert [p.wait(timeout=10) for p in sleepers] == [-signal.SIGKILL] * 2
        assert (roots["memory"] / "5-0" / "cgroup.kill").read_text() == "1"
        assert len(calls) == 2
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
    # Emptied groups are removed (cgroupfs removes a group's own files with it).
    real_rmdir = Path.rmdir

    def cgroupfs_rmdir(path: Path) -> None:
        for f in path.iterdir():
            f.unlink()
        real_rmdir(path)

    monkeypatch.setattr(Path, "rmdir", cgroupfs_rmdir)
    group.kill_all()
    assert not any(d.exists() for d in group.dirs.values())


def test_the_first_bot_of_a_server_sweeps_what_dead_servers_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    swept: list[int] = []

    def sweep() -> list[Path]:
        swept.append(1)
        return []

    monkeypatch.setattr(cgroups, "_swept", False)
    monkeypatch.setattr(cgroups, "sweep_stale_cgroups", sweep)
    tree(monkeypatch, "v2", {"pids": tmp_path / "cardshark"})
    BotCgroups("1-0", BotLimits())
    BotCgroups("1-1", BotLimits())
    assert swept == [1] and cgroups._swept


def test_stale_groups_are_those_of_dead_servers_empty_and_old_enough(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    roots = {"memory": tmp_path / "memory", "pids": tmp_path / "pids"}
    tree(monkeypatch, "v1", roots)
    old = 1_000_000.0  # seconds since the epoch: long ago

    def group(root: Path, name: str, aged: bool = True) -> Path:
        path = root / name
        path.mkdir(parents=True)
        if aged:
            os.utime(path, (old, old))
        return path

    stale = [
        group(roots["memory"], f"{gone.pid}-0"),
        group(roots["pids"], f"{gone.pid}-3"),
    ]
    kept = [
        group(roots["memory"], f"{os.getpid()}-1"),  # its server lives
        group(roots["memory"], f"{gone.pid}-x"),  # not a bot's name
        group(roots["memory"], "cardshark-extra"),
        group(roots["memory"], f"-{gone.pid}"),
        group(roots["pids"], f"{gone.pid}-4", aged=False),  # made just now: maybe a live launch's
    ]
    busy = group(roots["pids"], f"{gone.pid}-5")
    (busy / "cgroup.procs").write_text("")  # rmdir refuses it, as the kernel would
    os.utime(busy, (old, old))  # (the file made it new again)
    assert sorted(cgroups.sweep_stale_cgroups()) == sorted(stale)
    assert not any(p.exists() for p in stale) and all(p.exists() for p in [*kept, busy])
    assert cgroups.sweep_stale_cgroups(min_age_s=0) == [roots["pids"] / f"{gone.pid}-4"]


def test_a_process_is_alive_while_it_runs_whoever_it_runs_as(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert cgroups._pid_alive(os.getpid()) and not cgroups._pid_alive(gone.pid)

    def not_ours(pid: int, sig: int) -> None:
        raise PermissionError(pid)

    monkeypatch.setattr(os, "kill", not_ours)
    assert cgroups._pid_alive(gone.pid)


def test_a_cpuset_whose_parent_cannot_be_read_still_gets_the_bots_cores(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "cpuset" / "cardshark"  # no cpuset files to read anywhere
    tree(monkeypatch, "v1", {"cpuset": root})
    BotCgroups("9-1", BotLimits(cpus=(4,)))
    assert (root / "9-1" / "cpuset.cpus").read_text() == "4"
    assert (root / "9-1" / "cpuset.mems").read_text() == ""
    assert sorted(p.name for p in root.iterdir()) == ["9-1"]  # nothing written to the parent


def test_a_group_left_by_an_earlier_bot_of_the_same_slot_is_used_again(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    roots = {k: tmp_path / k / "cardshark" for k in ("cpuacct", "memory", "pids")}
    (tmp_path / "cpuacct").write_text("")  # the first controller cannot have a group
    (roots["pids"] / "3-0").mkdir(parents=True)  # its rmdir failed last time
    (roots["memory"] / "3-0" / "memory.swappiness").mkdir(parents=True)  # no swappiness here
    tree(monkeypatch, "v1", roots)
    group = BotCgroups("3-0", BotLimits(memory_mb=2, pids=3))
    # The others are still made; swappiness alone failing loses no controller.
    assert group.dirs == {"memory": roots["memory"] / "3-0", "pids": roots["pids"] / "3-0"}
    assert (roots["memory"] / "3-0" / "memory.limit_in_bytes").read_text() == str(2 << 20)
    assert (roots["pids"] / "3-0" / "pids.max").read_text() == "3"


def test_a_v2_parent_that_refuses_its_controllers_still_gets_the_bots_limits(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mine = tmp_path / "cardshark"
    (mine / "cgroup.subtree_control").mkdir(parents=True)  # unwritable
    tree(monkeypatch, "v2", {"memory": mine, "pids": mine})
    group = BotCgroups("8-0", BotLimits(memory_mb=1, pids=2))
    assert group.kinds == frozenset({"memory", "pids"})
    assert (mine / "8-0" / "pids.max").read_text() == "2"


def test_kill_all_gives_up_on_processes_it_cannot_kill_after_50_rounds(
    no_sweep: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tree(monkeypatch, "v2", {"pids": tmp_path / "cardshark"})
    group = BotCgroups("4-0", BotLimits())
    gone = subprocess.Popen(["true"])
    gone.wait()
    rounds: list[int] = []

    def stuck() -> set[int]:  # a group the kernel never empties
        rounds.append(1)
        return {gone.pid}

    monkeypatch.setattr(group, "pids", stuck)
    group.kill_all()  # the process is gone: nothing to raise
    assert len(rounds) == 50
    killed: list[int] = []

    def not_ours(pid: int, sig: int) -> None:
        killed.append(pid)
        raise PermissionError(pid)

    monkeypatch.setattr(os, "kill", not_ours)
    group.kill_all()  # another user's: nothing to raise either
    assert killed == [gone.pid] * 50


def test_nothing_to_sweep_where_no_group_was_ever_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tree(monkeypatch, "v1", {"memory": tmp_path / "memory" / "cardshark"})
    assert cgroups.sweep_stale_cgroups(min_age_s=0) == []
