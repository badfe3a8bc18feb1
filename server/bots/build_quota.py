"""A build's cgroups beyond a bot's: its CPU quota, and the counters read when it ends."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from server.bots.cgroups import BotCgroups

CPU_V1 = Path("/sys/fs/cgroup/cpu")  # cgroup v1's cpu controller (tests point it at a tmp tree)


class CpuQuota:
    """The build's CPU quota: a cgroup of the cpu controller (v1) or cpu.max (v2)."""

    PERIOD_US = 100_000

    def __init__(self, name: str, cgroups: BotCgroups | None, cpus: float) -> None:
        self.made: Path | None = None
        self.procs: str | None = None
        if cgroups is None or cpus <= 0:
            return
        quota = f"{max(1000, int(cpus * self.PERIOD_US))}"
        with contextlib.suppress(OSError):
            if cgroups.version == "v2" and "memory" in cgroups.dirs:
                here = cgroups.dirs["memory"]
                (here.parent / "cgroup.subtree_control").write_text("+cpu")
                (here / "cpu.max").write_text(f"{quota} {self.PERIOD_US}")
                return  # the launcher joins this group already
            if cgroups.version == "v1":
                base = CPU_V1
                if not (base / "cgroup.procs").exists():
                    return
                sweep_quotas(base / "cardshark")
                here = base / "cardshark" / name
                here.mkdir(parents=True, exist_ok=True)
                self.made = here
                (here / "cpu.cfs_period_us").write_text(str(self.PERIOD_US))
                (here / "cpu.cfs_quota_us").write_text(quota)
                self.procs = str(here / "cgroup.procs")

    def wrap(self, argv: list[str]) -> list[str]:
        """argv started from inside the quota's group (so is everything it starts)."""
        if self.procs is None:
            return argv
        join = 'echo $$ > "$1" || exit 125; shift; exec "$@"'
        return ["/bin/sh", "-c", join, "sh", self.procs, *argv]

    def remove(self) -> None:
        """Remove the group (its processes are killed by then)."""
        if self.made is not None:
            for _ in range(50):
                try:
                    self.made.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # the killed processes are still leaving the group
            self.made = None


def sweep_quotas(root: Path) -> None:
    """Remove the empty quota groups of servers that are gone (`kill -9` leaves them)."""
    with contextlib.suppress(OSError):
        for group in root.iterdir():
            pid = group.name.partition("-")[0]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                with contextlib.suppress(OSError):
                    group.rmdir()  # refused while a process is in it


def cgroup_counter(cgroups: BotCgroups | None, kind: str, files: tuple[str, ...], key: str) -> int:
    """A count from a cgroup's event file (oom_kill, max), 0 when none is kept."""
    if cgroups is None or kind not in cgroups.dirs:
        return 0
    for name in files:
        with contextlib.suppress(OSError, ValueError):
            for line in (cgroups.dirs[kind] / name).read_text().splitlines():
                field, _, value = line.partition(" ")
                if field == key:
                    return int(value)
    return 0
