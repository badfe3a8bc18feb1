"""A worker's claim on one CPU core, so its match (referee and bots) runs on that core alone.

A match is a ping-pong: the referee and one bot at a time, each waking the next. Two
unpinned workers on two cores leave a core idle whenever both chains' next process waits
for the same core; pinned, each chain keeps its own (bench/workers.py, two workers over one
on 2 cores: 1.35x -> 1.93x). Workers of one user on one machine share a directory of lock
files, one per core: a worker holds the flock of its core's file for its life (the kernel
drops it when the process dies, kill -9 included), so the next worker takes a free core.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

LOCK_DIR_ENV = "CARDSHARK_CPU_LOCKS"  # where the lock files are (tests give their own)
AUTO, NONE = "auto", "none"
ALLOWED = f"{AUTO} (a core no other worker of this user holds), {NONE}, or a core number"


class CpuChoiceError(ValueError):
    """A --cpu value that names no usable core; the message says what is allowed."""


@dataclass
class CpuClaim:
    """A core this process is pinned to, and the lock that tells other workers so."""

    cpu: int
    shared: bool  # the core was asked for by number and another worker holds it too
    _fd: int

    def release(self) -> None:
        """Let another worker take the core (the process's exit does the same)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def usable_cpus() -> list[int]:
    """The cores this process may run on (its affinity: taskset and cpusets apply)."""
    return sorted(os.sched_getaffinity(0))


def parse_cpu(text: str) -> str | int:
    """A --cpu value: AUTO, NONE or a core this process may use; else CpuChoiceError."""
    value = text.strip().lower()
    if value in (AUTO, NONE):
        return value
    cpus = usable_cpus()
    if not value.isdigit():
        raise CpuChoiceError(f"bad --cpu {text!r}; allowed: {ALLOWED}")
    if int(value) not in cpus:
        raise CpuChoiceError(
            f"--cpu {text}: this process may use cores {', '.join(map(str, cpus))} only"
        )
    return int(value)


def lock_dir() -> Path:
    """This user's directory of core locks (CARDSHARK_CPU_LOCKS, else one in the temp dir)."""
    given = os.environ.get(LOCK_DIR_ENV)
    return Path(given) if given else Path(tempfile.gettempdir()) / f"cardshark-cpus-{os.getuid()}"


def _own_dir(path: Path) -> None:
    """Make path a directory of ours that no other user can write (never a symlink)."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700, parents=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise CpuChoiceError(f"{path} is not a directory of this user: cannot keep core locks")
    if info.st_mode & 0o022:
        raise CpuChoiceError(f"{path} is writable by other users: cannot keep core locks")


def _try_lock(directory: Path, cpu: int) -> int | None:
    """The descriptor holding cpu's lock, or None when another process holds it."""
    fd = os.open(directory / f"cpu{cpu}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd  # not inheritable (Python's default): bots never hold a worker's core lock


def claim_cpu(choice: str | int, directory: Path | None = None) -> CpuClaim | None:
    """Claim a core as --cpu asks: AUTO a free one (None when every core is held, or there is
    one core only: nothing to gain), NONE none, a number that one."""
    if choice == NONE:
        return None
    cpus = usable_cpus()
    where = directory or lock_dir()
    _own_dir(where)
    if isinstance(choice, int):
        fd = _try_lock(where, choice)
        return CpuClaim(choice, fd is None, -1 if fd is None else fd)
    if len(cpus) < 2:
        return None
    # The scan starts at a core picked by the pid: workers that cannot see each other's locks
    # (containers, each with its own /tmp) spread over the cores instead of all taking the first.
    start = os.getpid() % len(cpus)
    for cpu in cpus[start:] + cpus[:start]:
        fd = _try_lock(where, cpu)
        if fd is not None:
            return CpuClaim(cpu, False, fd)
    return None


def pin_process(cpu: int) -> None:
    """Run every thread of this process, and every process it starts later, on cpu alone."""
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that has just ended
            os.sched_setaffinity(int(task), {cpu})
