"""A submitted bot's build: its command run once in the bot's sandbox on a writable copy of
its tree, the output captured, the built tree frozen read-only. See docs/submitting.md.

The build runs in the same sandbox as a bot (server/bots/sandbox.py: bubblewrap, no network,
its own uid when the server is root, its own session keyring, the seccomp filter, cgroups),
with no referee socket. Its tree is a tmpfs of bounded size mounted at destination's path
inside the sandbox: the source is copied in, the command runs there, and what it left is
streamed out as a tar on a pipe of its own and unpacked into destination with every check a
stored archive gets (server/bots/archive.py). Nothing the build does reaches the host's disk
but that checked tar, at most the size of its tmpfs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from server.bots.archive import ArchiveError, make_read_only
from server.bots.build_output import (
    Outcome,
    Tail,
    read_log,
    read_result,
    tree_pages,
    unpack_built,
)
from server.bots.build_quota import CpuQuota, cgroup_counter
from server.bots.cgroups import BotLimits
from server.bots.code import remove_tree, tree_bytes
from server.bots.process import with_parent_death_signal
from server.bots.sandbox import HOME_INSIDE, TMP_INSIDE, Confinement, SandboxPolicy, confine

SOURCE_INSIDE = "/run/cardshark/source"
OOM_FILES = ("memory.events", "memory.oom_control")  # v2, v1: each has a line "oom_kill N"
# Run as the build's own uid inside the sandbox, as `sh -c WRAPPER sh DEST COMMAND`, with the
# server's end of the result pipe as its stdin. It moves that pipe to fd 3, which the build
# never has; copies the source's entries in (the tmpfs's root itself is root's, not the
# build's to touch); runs the build; kills whatever the build left running (its PID namespace
# holds only the build: kill -1 reaches nothing outside); reports the status and the free
# space of its three tmpfs; and, on success, becomes tar of the built tree. (The build, as the
# same uid, could still write to fd 3 through /proc: nothing read there is trusted. The status
# is only what the build could say anyway, and the tar is checked as an archive from outside.)
WRAPPER = """exec 3>&0 </dev/null
dest=$1 command=$2
set --
for f in "$SOURCE"/* "$SOURCE"/.[!.]* "$SOURCE"/..?*; do
    if [ -e "$f" ] || [ -L "$f" ]; then set -- "$@" "$f"; fi
done
cd "$dest" && { [ $# -eq 0 ] || cp -R --preserve=mode,timestamps -- "$@" .; } &&
    find . -mindepth 1 ! -type l -exec chmod u+w {} + || { echo "copy failed" >&3; exit 1; }
unset SOURCE
/bin/sh -c "$command" 3>&-
status=$?
kill -9 -1 2>/dev/null
echo "status $status" >&3
stat -f -c 'free %a %b %S' "$dest" /tmp "$HOME" >&3
[ "$status" -eq 0 ] || exit 0
echo tar >&3
exec tar --format=pax --hard-dereference --numeric-owner -cf - . >&3
"""


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use (defaults below; docs/submitting.md lists them)."""

    # Wall time from the sandbox's start to the last byte of the built tree.
    time_s: float = 120.0
    # Memory of every process of the build together (cgroup), tmpfs pages included.
    memory_mb: int = 2048
    # Processes and threads of the build together (cgroup pids.max).
    pids: int = 128
    # Bytes the build may add to its tree (tmpfs size), and the size of its /tmp and $HOME.
    write_mb: int = 256
    # Output kept: the last this many bytes of stdout and stderr together.
    log_bytes: int = 65536
    # Cores' worth of CPU time per second (cgroup CPU quota; 0: no quota).
    cpus: float = 1.0


@dataclass(frozen=True)
class BuildResult:
    """How a build ended: ok, why in one line, its output's tail, and its wall time."""

    ok: bool
    reason: str
    log: str
    seconds: float


def _status_words(status: int) -> str:
    if status > 128:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(status - 128).name}"
    return f"exited with status {status}"


def _build_env() -> dict[str, str]:
    """The whole environment of a build: no variable of the server's but LANG."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": HOME_INSIDE,
        "TMPDIR": TMP_INSIDE,
        "SOURCE": SOURCE_INSIDE,
    }


def _mounts(source: Path, inside: Path, tree_size: int) -> list[str]:
    """bwrap options: the source read-only, and the build's tree as a bounded tmpfs."""
    cmd = []
    for parent in sorted({str(p) for p in [*inside.parents, *Path(SOURCE_INSIDE).parents]}):
        if parent not in ("/", TMP_INSIDE, HOME_INSIDE):
            cmd += ["--perms", "0755", "--dir", parent]
    cmd += ["--ro-bind", str(source), SOURCE_INSIDE]
    # Its own uid must write there; nobody else is in this sandbox.
    cmd += ["--perms", "0777", "--size", str(tree_size), "--tmpfs", str(inside)]
    return cmd


async def build(
    source: Path,
    command: str,
    destination: Path,
    policy: SandboxPolicy,
    limits: BuildLimits = BuildLimits(),
) -> BuildResult:
    """Build a copy of source into destination by running command with /bin/sh -c there."""
    # destination must not exist, or be an empty directory; on success it is the built tree,
    # read-only; on failure nothing is there. SandboxError if the sandbox cannot be built.
    started = time.monotonic()
    source, destination = Path(os.path.abspath(source)), Path(os.path.abspath(destination))
    if not source.is_dir():
        raise NotADirectoryError(f"the build's source {source} is not a directory")
    if destination.exists():
        destination.rmdir()  # OSError if it is not an empty directory: nothing is touched
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.build-", dir=destination.parent))
    tail = Tail(limits.log_bytes)
    reason: str | None = "interrupted"
    try:
        if policy.on:
            reason = await _sandboxed(source, command, destination, staging, policy, limits, tail)
        else:
            reason = await _unsandboxed(source, command, staging, limits, tail)
        if reason is None:
            make_read_only(staging)
            staging.rename(destination)
    finally:
        remove_tree(staging)
        if reason is not None:
            remove_tree(destination)
    return BuildResult(reason is None, reason or "built", tail.text(), time.monotonic() - started)


async def _sandboxed(
    source: Path,
    command: str,
    destination: Path,
    staging: Path,
    policy: SandboxPolicy,
    limits: BuildLimits,
    tail: Tail,
) -> str | None:
    """Run the build in the sandbox and unpack its tree into staging; None, or why not."""
    tree_size = limits.write_mb * (1 << 20) + tree_pages(source)
    mounts = _mounts(source, destination, tree_size)
    argv = ["/bin/sh", "-c", WRAPPER, "sh", str(destination), command]
    sandboxed = replace(policy, limits=_bot_limits(limits, policy.limits))
    confinement = confine(sandboxed, argv, None, "", server="none", mounts=mounts)
    quota: CpuQuota | None = None
    try:
        confinement.env = _build_env()
        quota = CpuQuota(f"{os.getpid()}-{confinement.slot}", confinement.cgroups, limits.cpus)
        cap = 2 * tree_size + (1 << 20)  # the tar of a full tmpfs, headers and padding
        with tempfile.TemporaryFile(dir=staging.parent) as spool:
            argv = quota.wrap(confinement.argv)
            outcome = await _launch(argv, confinement, limits, tail, spool, cap)
            reason = _reason(outcome, limits)
            if reason is None and outcome.tar is None:
                reason = "the built tree could not be read out of the sandbox"
            if reason is None:
                try:
                    too_big = f"wrote more than {limits.write_mb} MiB"
                    await asyncio.to_thread(unpack_built, spool, staging, tree_size, too_big)
                except ArchiveError as exc:
                    reason = str(exc)
    finally:
        confinement.release()
        if quota is not None:
            quota.remove()
    if reason is not None and outcome.refused:
        reason += f" ({outcome.refused} forks refused at the limit of {limits.pids} processes)"
    return reason


async def _launch(
    argv: list[str],
    confinement: Confinement,
    limits: BuildLimits,
    tail: Tail,
    spool: IO[bytes],
    cap: int,
) -> Outcome:
    """Start the sandbox, read its output and result until it ends or time is up."""
    outcome = Outcome()
    read_end, write_end = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=write_end,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=confinement.env,
            start_new_session=True,
            pass_fds=confinement.pass_fds,
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        confinement.started()
        os.close(write_end)
    results = asyncio.StreamReader(limit=1 << 20)
    try:
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(results), os.fdopen(read_end, "rb", 0)
        )
    except BaseException:
        _kill(proc, confinement)
        await proc.wait()
        raise
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(limits.time_s):
            await asyncio.gather(
                read_log(proc.stdout, tail),
                read_result(results, outcome, spool, cap, lambda: _kill(proc, confinement)),
                proc.wait(),
            )
    except TimeoutError:
        outcome.timed_out = True
    finally:
        transport.close()
        outcome.ooms = cgroup_counter(confinement.cgroups, "memory", OOM_FILES, "oom_kill")
        outcome.refused = cgroup_counter(confinement.cgroups, "pids", ("pids.events",), "max")
        _kill(proc, confinement)
        await proc.wait()
    outcome.returncode = proc.returncode
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(1.0):
            await read_log(proc.stdout, tail)  # what the last processes wrote as they died
    return outcome


async def _unsandboxed(
    source: Path, command: str, staging: Path, limits: BuildLimits, tail: Tail
) -> str | None:
    """Run the build as the server's user in staging (--sandbox none: for development only):
    the time limit, a file size limit and a size check after it, and nothing else."""
    await asyncio.to_thread(shutil.copytree, source, staging, symlinks=True, dirs_exist_ok=True)
    for here, dirs, files in os.walk(staging):
        for name in [*dirs, *files]:
            path = os.path.join(here, name)
            if not os.path.islink(path):
                os.chmod(path, os.lstat(path).st_mode | 0o200)
    argv = ["/bin/sh", "-c", command]
    if prlimit := shutil.which("prlimit"):
        argv = [prlimit, f"--fsize={limits.write_mb << 20}", "--", *argv]
    with tempfile.TemporaryDirectory(prefix="cardshark-build-home-") as home:
        env = _build_env() | {"HOME": home, "TMPDIR": home}
        del env["SOURCE"]
        proc = await asyncio.create_subprocess_exec(
            *with_parent_death_signal(argv),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            cwd=staging,
            start_new_session=True,
        )
        assert proc.stdout is not None
        outcome = Outcome()
        try:
            async with asyncio.timeout(limits.time_s):
                await asyncio.gather(read_log(proc.stdout, tail), proc.wait())
        except TimeoutError:
            outcome.timed_out = True
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # the build's own and what it left
            await proc.wait()
    outcome.status = outcome.returncode = proc.returncode
    if outcome.status is not None and outcome.status < 0:
        outcome.status = 128 - outcome.status
    grown = tree_bytes(staging) - tree_bytes(source)
    outcome.full = grown > limits.write_mb << 20
    if outcome.full and not outcome.timed_out:
        return f"wrote more than {limits.write_mb} MiB"
    return _reason(outcome, limits)


def _bot_limits(limits: BuildLimits, bots: BotLimits) -> BotLimits:
    """The sandbox's limits for a build (on the cores the policy's bots have)."""
    return BotLimits(
        memory_mb=limits.memory_mb,
        pids=limits.pids,
        cpu_s=int(limits.time_s) + 1,
        open_files=1024,
        file_size_mb=limits.write_mb,
        tmp_mb=limits.write_mb,
        cpus=bots.cpus,
    )


def _kill(proc: asyncio.subprocess.Process, confinement: Confinement) -> None:
    """SIGKILL the launch's process group and every process in its cgroups."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if confinement.cgroups is not None:
        confinement.cgroups.kill_all()


def _reason(out: Outcome, limits: BuildLimits) -> str | None:
    """Why the build failed, in one line; None if it built."""
    written = f"wrote more than {limits.write_mb} MiB"
    if out.timed_out:
        return f"timed out after {limits.time_s:g} s"
    if out.ooms:
        return f"killed: out of memory (limit {limits.memory_mb} MiB)"
    if out.over:
        return written
    if not out.copied:
        return "the source could not be copied into the build's tree"
    if out.status is None:
        code = out.returncode if out.returncode is not None else -1
        how = _status_words(code) if code >= 0 else f"was killed by signal {-code}"
        return f"the build's sandbox ended before the build did: it {how}"
    if out.status == 128 + signal.SIGXFSZ or (out.status != 0 and out.full):
        return written
    if out.status != 0:
        return _status_words(out.status)
    if out.returncode != 0:
        return f"the built tree could not be read out (tar {_status_words(out.returncode or 0)})"
    return None
