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
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from server.bots.cgroups import BotCgroups, BotLimits
from server.bots.seccomp_filter import SeccompUnavailable, bot_filter, filter_fd, syscall_number

SOCKET_INSIDE = "/run/cardshark/referee.sock"
HOME_INSIDE = "/home/bot"
TMP_INSIDE = "/tmp"
UID_BASE = 200_000
UID_SLOTS = 50_000
PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"
CLIENTS_DIR = Path(__file__).resolve().parents[2] / "clients"
SERVER_PYTHON_BIN = os.path.dirname(sys.executable)  # in the sandbox read-only (_python_dirs)
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
        # The server's Python first: `python3` in a bot's command is an interpreter with
        # the Python kit and its gRPC, which a submitted bot cannot name by its path.
        "PATH": f"{SERVER_PYTHON_BIN}:/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": HOME_INSIDE,
        "TMPDIR": TMP_INSIDE,
    }
    if not sandboxed:
        env["PATH"] = os.environ.get("PATH", env["PATH"])
        env["HOME"] = os.environ.get("HOME", "/tmp")
        env["TMPDIR"] = os.environ.get("TMPDIR", "/tmp")
    return env


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
    *,
    mounts: Sequence[str] = (),
) -> Confinement:
    """The command line that starts argv in a new sandbox, reaching the referee by socket_path
    bind-mounted inside; with no socket_path, by `server` (the local transport's inherited
    descriptor, "fd:3": bwrap passes inherited descriptors through) and nothing else.

    With workdir (a bot's unpacked stored code), that is the bot's own directory, mounted
    read-only, and argv runs in it as given (relative paths are the tree's).
    `mounts` are more bwrap options, after the bot's own mounts (a build's tree: build.py)."""
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
    if socket_path is None and server is None:
        raise SandboxError("a sandboxed bot needs the referee's socket or an inherited one")
    # Everything is checked: from here on what is taken is given back if the launch fails.
    root = os.geteuid() == 0
    slot = _take_slot()
    confinement = Confinement(policy, [], {}, None, slot)
    try:
        if root:
            confinement.cgroups = BotCgroups(f"{os.getpid()}-{slot}", policy.limits)
        _launch(confinement, argv, own_dir, socket_path, server, token, bwrap, keyctl, root, mounts)
    except BaseException:
        confinement.release()
        raise
    return confinement


def _launch(
    confinement: Confinement,
    argv: list[str],
    own_dir: Path | None,
    socket_path: str | None,
    server: str | None,
    token: str,
    bwrap: str,
    keyctl: int,
    root: bool,
    mounts: Sequence[str] = (),
) -> None:
    """Fill in the launch of a confinement whose uid slot and cgroups are taken."""
    policy, slot, cgroups = confinement.policy, confinement.slot, confinement.cgroups
    assert slot is not None
    uid = UID_BASE + (os.getpid() * 7 + slot) % UID_SLOTS
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
    cmd += mounts
    cmd += ["--chdir", str(own_dir) if own_dir is not None else HOME_INSIDE]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    if socket_path is not None:
        cmd += ["--ro-bind", socket_path, SOCKET_INSIDE]
        server = f"unix:{SOCKET_INSIDE}"
    assert server is not None  # confine checked it before it took anything
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
    confinement.argv, confinement.env, confinement.pass_fds = cmd, env, (seccomp,)


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
