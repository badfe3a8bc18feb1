"""A managed bot's resource limits and its cgroups: memory, pids, cores, and a kill list."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from server.match.clocks import CgroupCpuMeter


@dataclass(frozen=True)
class BotLimits:
    """Resource limits of one managed bot (0 means no limit)."""

    memory_mb: int = 1024
    pids: int = 64
    cpu_s: int = 0
    open_files: int = 256
    file_size_mb: int = 64
    tmp_mb: int = 64
    # The cores the bot may run on, held by its cpuset cgroup (where the machine has one):
    # empty, those of the process that starts it (a pinned worker's core).
    cpus: tuple[int, ...] = ()

    def prlimit_args(self, cgroup_kinds: frozenset[str]) -> list[str]:
        """prlimit flags: the rlimits always, the ones a cgroup enforces only as a fallback."""
        args = [f"--nofile={self.open_files}"]
        if self.file_size_mb:
            args.append(f"--fsize={self.file_size_mb << 20}")
        if self.cpu_s:
            args.append(f"--cpu={self.cpu_s}")
        if self.memory_mb and "memory" not in cgroup_kinds:
            args.append(f"--as={self.memory_mb << 20}")
        if self.pids and "pids" not in cgroup_kinds:
            args.append(f"--nproc={self.pids}")
        return args


@cache
def cgroup_root() -> tuple[str, dict[str, Path]]:
    """Where bot cgroups go: ("v2", {...}), ("v1", {controller: dir}) or ("", {}) if not ours."""
    unified = Path("/sys/fs/cgroup")
    controllers = unified / "cgroup.controllers"
    if controllers.exists():
        have = set(controllers.read_text().split())
        if {"memory", "pids"} <= have and os.access(unified, os.W_OK):
            mine = unified / "cardshark"
            return "v2", {"memory": mine, "pids": mine, "cpuacct": mine}
        return "", {}
    found = {}
    for kind in ("memory", "pids", "cpuacct", "cpuset"):
        base = unified / kind
        if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
            found[kind] = base / "cardshark"
    return ("v1", found) if found else ("", {})


def _cpuset_writes(bot_dir: Path, cpus: tuple[int, ...]) -> list[tuple[Path, str]]:
    """What confines a bot to its cores in a cgroup v1 cpuset (a child starts with no cores
    and no memory nodes, so our parent group gets its parent's first). A bot may still set
    its own affinity, but only within these cores: it cannot take another worker's core."""
    parent = bot_dir.parent
    writes = []
    mems = ""
    for name in ("cpuset.cpus", "cpuset.mems"):
        with contextlib.suppress(OSError):
            value = (parent / name).read_text().strip()
            if not value:
                value = (parent.parent / name).read_text().strip()
                writes.append((parent / name, value))
            mems = value
    mine = cpus or tuple(sorted(os.sched_getaffinity(0)))
    writes.append((bot_dir / "cpuset.cpus", ",".join(map(str, mine))))
    writes.append((bot_dir / "cpuset.mems", mems))
    return writes


STALE_CGROUP_AGE_S = 60.0  # younger groups may be a live server's, its launcher not in yet
_swept = False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it runs, as another user
    return True


def sweep_stale_cgroups(min_age_s: float = STALE_CGROUP_AGE_S) -> list[Path]:
    """Remove the empty bot cgroups of servers that are gone (a `kill -9` leaves them: the
    kernel kills the bots, but nobody removes their groups); returns what was removed. A group
    is the server's pid and a slot; one whose server lives, one younger than min_age_s, or one
    with a process in it is left alone (rmdir refuses a group that is not empty)."""
    removed = []
    now = time.time()
    for root in set(cgroup_root()[1].values()):
        with contextlib.suppress(OSError):
            for group in root.iterdir():
                pid, dash, slot = group.name.partition("-")
                if not (dash and pid.isdigit() and slot.isdigit()) or _pid_alive(int(pid)):
                    continue
                with contextlib.suppress(OSError):
                    if now - group.stat().st_mtime >= min_age_s:
                        group.rmdir()
                        removed.append(group)
    return removed


class BotCgroups:
    """The cgroups of one bot: memory and pids limits, and a list of every process to kill."""

    def __init__(self, name: str, limits: BotLimits) -> None:
        global _swept
        if not _swept:  # once per server, at its first bot
            _swept = True
            sweep_stale_cgroups()
        self.version, roots = cgroup_root()
        self.dirs: dict[str, Path] = {}
        for kind, root in roots.items():
            path = root / name
            if path in self.dirs.values():
                self.dirs[kind] = path
                continue
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError:
                continue
            self.dirs[kind] = path
        self._limit(limits)

    @property
    def kinds(self) -> frozenset[str]:
        """Controllers that enforce this bot's limits."""
        return frozenset(self.dirs)

    def _limit(self, limits: BotLimits) -> None:
        v2 = self.version == "v2"
        if self.version == "v2" and self.dirs:
            with contextlib.suppress(OSError):
                parent = next(iter(self.dirs.values())).parent
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
        writes = []
        if "memory" in self.dirs and limits.memory_mb:
            file = "memory.max" if v2 else "memory.limit_in_bytes"
            writes.append((self.dirs["memory"] / file, str(limits.memory_mb << 20)))
            if not v2:
                # No swap to hide in: going over the limit is the OOM killer's, at once.
                writes.append((self.dirs["memory"] / "memory.swappiness", "0"))
        if "pids" in self.dirs and limits.pids:
            writes.append((self.dirs["pids"] / "pids.max", str(limits.pids)))
        if "cpuset" in self.dirs:
            writes += _cpuset_writes(self.dirs["cpuset"], limits.cpus)
        for path, value in writes:
            try:
                path.write_text(value)
            except OSError:
                if not path.name.endswith("swappiness"):
                    self.dirs = {k: d for k, d in self.dirs.items() if d != path.parent}

    def cpu_meter(self) -> CgroupCpuMeter | None:
        """The bot's CPU time as its cgroup counts it, if a cgroup counts it."""
        where = self.dirs.get("cpuacct")
        if where is None:
            return None
        try:
            return CgroupCpuMeter(where / ("cpu.stat" if self.version == "v2" else "cpuacct.usage"))
        except OSError:
            return None

    def procs_files(self) -> list[str]:
        """The cgroup.procs files a launcher writes its pid into before it execs the bot."""
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def pids(self) -> set[int]:
        """Every process in the bot's cgroups now."""
        found: set[int] = set()
        for d in set(self.dirs.values()):
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self) -> None:
        """SIGKILL every process left in the bot's cgroups, then remove them."""
        for d in set(self.dirs.values()):
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        for d in set(self.dirs.values()):
            _remove_group(d)


def _remove_group(group: Path, tries: int = 50) -> None:
    """rmdir a cgroup; while its killed processes are still leaving it (EBUSY), a moment later."""
    for _ in range(tries):
        try:
            group.rmdir()
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(0.01)
