"""The seccomp filter of a managed bot: system calls no card bot needs, denied before it starts.

libseccomp compiles the filter (through pyseccomp, ctypes over Debian's libseccomp.so.2) and
exports it as the BPF program bubblewrap loads with `--seccomp FD` just before it execs the
bot's command. Every call in DENIED fails with EPERM, clone with a namespace flag too, and
clone3 with ENOSYS. docs/security.md says why each is there.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from functools import cache
from typing import Any

# Each group: why no bot may make these calls, and the calls (names libseccomp resolves;
# one this architecture lacks is skipped).
DENIED: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "the kernel's keyrings: keys of the server's user, and a channel between two bots",
        ("keyctl", "add_key", "request_key"),
    ),
    ("kernel programs and performance counters", ("bpf", "perf_event_open")),
    ("page faults handled in user space, the usual lever of kernel exploits", ("userfaultfd",)),
    (
        "io_uring, a second way into the kernel",
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    ),
    ("new namespaces (a user namespace gives root inside it)", ("unshare", "setns")),
    (
        "mounts and the root directory",
        (
            "mount",
            "umount2",
            "pivot_root",
            "chroot",
            "move_mount",
            "open_tree",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
        ),
    ),
    (
        "reading or changing another process",
        (
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "process_madvise",
            "pidfd_getfd",
            "kcmp",
        ),
    ),
    (
        "loading kernel code",
        ("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"),
    ),
    (
        "the machine's own settings and devices",
        (
            "reboot",
            "swapon",
            "swapoff",
            "acct",
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "sethostname",
            "setdomainname",
            "syslog",
            "quotactl",
            "quotactl_fd",
            "vhangup",
            "iopl",
            "ioperm",
            "open_by_handle_at",
            "fanotify_init",
            "lookup_dcookie",
            "nfsservctl",
            "uselib",
            "_sysctl",
            "ustat",
            "sysfs",
        ),
    ),
)

# clone's namespace flags (CLONE_NEWTIME exists only for clone3 and unshare: in clone's flags
# its bit is the exit signal's).
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# A bot's fd for the filter is at least this: below it, the local transport's launcher puts
# the bot's socket on fd 3, and shells use 0 to 9 for redirections.
FILTER_FD_MIN = 10


class SeccompUnavailable(Exception):
    """libseccomp cannot be loaded here: no bot can be confined."""


def _pyseccomp() -> Any:
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:
        raise SeccompUnavailable(
            f"libseccomp cannot be loaded ({exc}): install the Debian package libseccomp2 "
            "and the Python package pyseccomp"
        ) from exc
    return pyseccomp


def syscall_number(name: str) -> int:
    """The number of a system call on this machine (negative: this architecture lacks it)."""
    sc = _pyseccomp()
    number: int = sc.resolve_syscall(sc.Arch.NATIVE, name)
    return number


def denied_calls() -> list[str]:
    """Every call the filter denies by name, in the order of DENIED."""
    return [name for _, names in DENIED for name in names]


@cache
def bot_filter() -> bytes:
    """The filter as a BPF program, compiled by libseccomp once per server."""
    sc = _pyseccomp()
    program = sc.SyscallFilter(sc.ALLOW)
    deny = sc.ERRNO(errno.EPERM)
    for name in denied_calls():
        number = syscall_number(name)
        if number >= 0:
            program.add_rule(deny, number)
    # Threads are clone without these flags (Python, Node, gRPC's C++); the flags are in
    # clone's first argument on every architecture but s390, which we do not run on.
    for flag in CLONE_NAMESPACE_FLAGS.values():
        program.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3's flags sit in a struct that seccomp cannot read: ENOSYS makes glibc and the
    # others fall back to clone, whose flags it can (as Docker's default profile does).
    program.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        program.export_bpf(out)
        out.seek(0)
        return out.read()


def filter_fd() -> int:
    """A new close-on-exec descriptor holding the filter, for one launch (bwrap reads it to
    its end); the caller passes it to bwrap and closes it."""
    program = bot_filter()
    memfd = os.memfd_create("cardshark-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(memfd, program)
        os.lseek(memfd, 0, os.SEEK_SET)
        return fcntl.fcntl(memfd, fcntl.F_DUPFD_CLOEXEC, FILTER_FD_MIN)
    finally:
        os.close(memfd)
