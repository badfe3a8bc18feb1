"""The sandbox of a managed bot, built by bubblewrap, setpriv, prlimit, cgroups and seccomp.

Each bot gets its own PID, network, IPC and UTS namespaces, the system read-only, its own
directory read-only, a private tmp/home, a clean environment, resource limits, a new empty
session keyring, a seccomp filter (server/bots/seccomp_filter.py) and, when the server runs as
root, a host uid of its own (setpriv inside the sandbox: no user namespace, so the uid is
the one the kernel checks files against). See docs/security.md.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from server.bots.seccomp_filter import SeccompUnavailable, bot_filter, filter_fd, syscall_number
from server.match.clocks import CgroupCpuMeter

SOCKET_INSIDE = "/run/cardshark/referee.sock"
HOME_INSIDE = "/home/bot"
TMP_INSIDE = "/tmp"
UID_BASE = 200_000
UID_SLOTS = 50_000
PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"
CLIENTS_DIR = Path(__file__).resolve().parents[2] / "clients"
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
SANDBOX_KINDS = ("bwrap", "none")
# Run by the server's own Python before bwrap: a child keeps its parent's session keyring (the
# server's, with whatever its login keeps there) through exec and setuid, and the bot cannot
# leave it later, as its filter denies keyctl. sys.argv[1] is keyctl's number; option 1 is
# KEYCTL_JOIN_SESSION_KEYRING, and a NULL name makes the keyring new and anonymous.
KEYRING_LAUNCHER = (
    "import ctypes, os, sys\n"
    "if ctypes.CDLL(None, use_errno=True).syscall(int(sys.argv[1]), 1, None) < 0:\n"
    "    sys.exit('cardshark: no new session keyring: ' + os.strerror(ctypes.get_errno()))\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


class SandboxError(Exception):
    """The sandbox cannot be built here, or a bot cannot be placed in it."""


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


def _python_dirs() -> list[str]:
    """The interpreter's install and virtualenv, which the example bots run on."""
    dirs = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix}
    return sorted(dirs)


@dataclass(frozen=True)
class SandboxPolicy:
    """How managed bots are confined: the kind, limits, and what they may read."""

    kind: str = "bwrap"
    limits: BotLimits = field(default_factory=BotLimits)
    # Read-only besides the system: the Python the examples run on, the SDKs we ship and the
    # .proto files the Node kit loads at run time.
    readonly: tuple[str, ...] = field(
        default_factory=lambda: (*_python_dirs(), str(CLIENTS_DIR), str(PROTO_DIR))
    )
    # A bot directory may not be or hold these (the server's working directory, database, logs).
    forbidden: tuple[str, ...] = ()
    # Where stored bot code is unpacked, one directory per digest (None: the default cache,
    # server.bots.code.default_cache_root).
    code_cache: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SANDBOX_KINDS:
            raise SandboxError(
                f"unknown sandbox {self.kind!r}; allowed: {', '.join(SANDBOX_KINDS)}"
            )

    @property
    def on(self) -> bool:
        """True unless the bots run unsandboxed."""
        return self.kind != "none"


NO_SANDBOX = SandboxPolicy(kind="none")


def bot_directory(argv: Sequence[str], policy: SandboxPolicy) -> Path | None:
    """The bot's own directory: that of the first argument naming a file outside the system."""
    shared = [*SYSTEM_DIRS, *policy.readonly]
    for arg in argv:
        path = Path(arg)
        if not path.is_file():
            continue
        absolute = Path(os.path.abspath(path))
        if any(_within(absolute, Path(s)) for s in shared):
            continue
        return absolute.parent
    return None


def _within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def absolute_argv(argv: Sequence[str]) -> list[str]:
    """argv with arguments naming existing files made absolute (the bot runs in its directory)."""
    return [os.path.abspath(a) if os.path.exists(a) and not os.path.isabs(a) else a for a in argv]


def clean_environment(server: str, token: str, sandboxed: bool) -> dict[str, str]:
    """The whole environment of a bot: no variable of the server's passes but PATH and LANG."""
    env = {
        "CARDSHARK_SERVER": server,
        "CARDSHARK_TOKEN": token,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": HOME_INSIDE,
        "TMPDIR": TMP_INSIDE,
    }
    if not sandboxed:
        env["PATH"] = os.environ.get("PATH", env["PATH"])
        env["HOME"] = os.environ.get("HOME", "/tmp")
        env["TMPDIR"] = os.environ.get("TMPDIR", "/tmp")
    return env


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
            with contextlib.suppress(OSError):
                d.rmdir()


_slots_in_use: set[int] = set()


def _take_slot() -> int:
    slot = next(s for s in itertools.count() if s not in _slots_in_use)
    _slots_in_use.add(slot)
    return slot


@dataclass
class Confinement:
    """One launch of one bot in the sandbox: its argv, environment and cgroups."""

    policy: SandboxPolicy
    argv: list[str]
    env: dict[str, str]
    cgroups: BotCgroups | None = None
    slot: int | None = None
    # Descriptors the launch inherits (the seccomp filter bwrap reads), closed once it started.
    pass_fds: tuple[int, ...] = ()

    def started(self) -> None:
        """Close the server's copies of the descriptors only the launch needed."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()

    def release(self) -> None:
        """Kill whatever is left of the bot and free its uid slot, cgroups and descriptors."""
        self.started()
        if self.cgroups is not None:
            self.cgroups.kill_all()
        if self.slot is not None:
            _slots_in_use.discard(self.slot)
            self.slot = None


def confine(
    policy: SandboxPolicy,
    argv: Sequence[str],
    socket_path: str | None,
    token: str,
    server: str | None = None,
    workdir: Path | None = None,
) -> Confinement:
    """The command line that starts argv in a new sandbox, reaching the referee by socket_path
    bind-mounted inside; with no socket_path, by `server` (the local transport's inherited
    descriptor, "fd:3": bwrap passes inherited descriptors through) and nothing else.

    With workdir (a bot's unpacked stored code), that is the bot's own directory, mounted
    read-only, and argv runs in it as given (relative paths are the tree's)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bwrap is not installed (Debian package bubblewrap)")
    try:
        keyctl = syscall_number("keyctl")
        bot_filter()
    except SeccompUnavailable as exc:
        raise SandboxError(str(exc)) from exc
    own_dir: Path | None
    if workdir is not None:
        argv, own_dir = list(argv), Path(os.path.abspath(workdir))
    else:
        argv = absolute_argv(argv)
        own_dir = bot_directory(argv, policy)
    if own_dir is not None:
        for bad in policy.forbidden:
            if _within(Path(os.path.abspath(bad)), own_dir):
                raise SandboxError(
                    f"the bot's directory {own_dir} holds {bad} (the server's files); "
                    "put the bot in a directory of its own"
                )
    root = os.geteuid() == 0
    slot = _take_slot()
    uid = UID_BASE + (os.getpid() * 7 + slot) % UID_SLOTS
    cgroups = BotCgroups(f"{os.getpid()}-{slot}", policy.limits) if root else None
    kinds = cgroups.kinds if cgroups is not None else frozenset()
    cmd = ["--die-with-parent", "--new-session"]
    cmd += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    cmd += ["--unshare-cgroup-try", "--hostname", "bot"]
    if not root:
        cmd.append("--unshare-user")
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            cmd += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            cmd += ["--ro-bind", path, path]
    binds = [
        p
        for p in policy.readonly
        if os.path.exists(p) and not any(_within(Path(p), Path(s)) for s in SYSTEM_DIRS)
    ]
    binds += [str(own_dir)] if own_dir is not None else []
    # The private /tmp and home come first, so that a bot directory under /tmp (a test's, or
    # a code cache there) is mounted on top of them instead of hidden by them.
    tmp_size = str(policy.limits.tmp_mb << 20)
    cmd += ["--perms", "1777", "--size", tmp_size, "--tmpfs", TMP_INSIDE]
    cmd += ["--perms", "1777", "--size", tmp_size, "--tmpfs", HOME_INSIDE]
    # bwrap would make the mount points' parents 0700 root, which the bot's uid cannot cross.
    mounted = {"/", TMP_INSIDE, HOME_INSIDE}
    parents = sorted({str(a) for b in [*binds, SOCKET_INSIDE] for a in Path(b).parents} - mounted)
    for parent in parents:
        cmd += ["--perms", "0755", "--dir", parent]
    for path in binds:
        cmd += ["--ro-bind", path, path]
    cmd += ["--chdir", str(own_dir) if own_dir is not None else HOME_INSIDE]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    if socket_path is not None:
        cmd += ["--ro-bind", socket_path, SOCKET_INSIDE]
        server = f"unix:{SOCKET_INSIDE}"
    elif server is None:
        raise SandboxError("a sandboxed bot needs the referee's socket or an inherited one")
    env = clean_environment(server, token, sandboxed=True)
    # The environment goes by env, not --setenv: an argv (with the token) is public in ps.
    cmd.append("--")
    if root:
        cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        cmd += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    cmd += ["prlimit", *policy.limits.prlimit_args(kinds), "--", *argv]
    seccomp = filter_fd()  # opened last: no error below can leak it
    launch = [sys.executable, "-I", "-S", "-c", KEYRING_LAUNCHER, str(keyctl)]
    cmd = [*launch, bwrap, "--seccomp", str(seccomp), *cmd]
    if cgroups is not None and cgroups.procs_files():
        files = cgroups.procs_files()
        # The launcher joins the cgroups before it execs bwrap, so nothing the bot starts
        # is ever outside them.
        join = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; '
        join += 'shift; n=$((n-1)); done; exec "$@"'
        cmd = ["/bin/sh", "-c", join, "sh", str(len(files)), *files, *cmd]
    return Confinement(policy, cmd, env, cgroups, slot, (seccomp,))


@cache
def unavailable_reason() -> str | None:
    """Why the sandbox cannot be built on this machine, or None if it can."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian package bubblewrap)"
    for tool in ("setpriv", "prlimit"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package util-linux)"
    try:
        bot_filter()
    except SeccompUnavailable as exc:
        return str(exc)
    import socket
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cardshark-probe-") as tmp:
        path = os.path.join(tmp, "probe.sock")
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.bind(path)
            probe = confine(SandboxPolicy(), ["/bin/true"], path, "probe")
            try:
                done = subprocess.run(
                    probe.argv,
                    env=probe.env,
                    capture_output=True,
                    text=True,
                    timeout=20,
                    pass_fds=probe.pass_fds,
                )
            finally:
                probe.release()
        finally:
            sock.close()
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bwrap cannot build a sandbox here: {why}"
    return None
