"""A build's steps read in the pytest process, no sandbox: why a build failed in one line, the
wrapper's report and the tar read off its pipe, the built tree unpacked with the archive's
checks, the output's tail, the CPU quota and the cgroup counters in tmp_path, and whole builds
with `--sandbox none`. tests/server/test_build.py runs the same code in the real sandbox."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import signal
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from server.bots import build as build_module
from server.bots import build_quota, cgroups
from server.bots.archive import ArchiveError
from server.bots.build import BuildLimits, BuildResult, build
from server.bots.build_output import Outcome, Tail, read_log, read_result, tree_pages, unpack_built
from server.bots.build_quota import CpuQuota, cgroup_counter, sweep_quotas
from server.bots.cgroups import BotCgroups, BotLimits
from server.bots.sandbox import NO_SANDBOX

LIMITS = BuildLimits(time_s=30, memory_mb=100, pids=10, write_mb=4)


def reason(**fields: object) -> str | None:
    return build_module._reason(Outcome(**fields), LIMITS)  # type: ignore[arg-type]


def test_a_failed_build_says_why_in_one_line_first_reason_first() -> None:
    assert reason(status=0, returncode=0) is None
    assert reason(timed_out=True, ooms=1, over=True) == "timed out after 30 s"
    assert reason(ooms=2, over=True, status=0) == "killed: out of memory (limit 100 MiB)"
    assert reason(over=True, status=0, returncode=0) == "wrote more than 4 MiB"
    assert reason(copied=False, status=0) == "the source could not be copied into the build's tree"
    ended = "the build's sandbox ended before the build did: it "
    assert reason() == ended + "was killed by signal 1"  # no status and no returncode: -1
    assert reason(returncode=-9) == ended + "was killed by signal 9"
    assert reason(returncode=0) == ended + "exited with status 0"
    assert reason(returncode=1) == ended + "exited with status 1"
    assert reason(returncode=137) == ended + "was killed by SIGKILL"
    assert reason(status=128 + signal.SIGXFSZ, returncode=0) == "wrote more than 4 MiB"
    assert reason(status=2, full=True, returncode=0) == "wrote more than 4 MiB"
    assert reason(status=0, full=True, returncode=0) is None  # full, and built: fine
    assert reason(status=2, returncode=0) == "exited with status 2"
    assert reason(status=139, returncode=0) == "was killed by SIGSEGV"
    assert reason(status=129, returncode=0) == "was killed by SIGHUP"
    assert reason(status=128, returncode=0) == "exited with status 128"
    assert reason(status=128 + 99, returncode=0) == "exited with status 227"  # no such signal
    assert reason(status=0) == "the built tree could not be read out (tar exited with status 0)"
    assert reason(status=0, returncode=2) == (
        "the built tree could not be read out (tar exited with status 2)"
    )
    assert build_module._reason(Outcome(timed_out=True), BuildLimits(time_s=2.5)) == (
        "timed out after 2.5 s"
    )


def test_a_builds_environment_mounts_and_limits_are_exactly_these(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("SECRET", "x")
    assert build_module._build_env() == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "de_DE.UTF-8",
        "HOME": "/home/bot",
        "TMPDIR": "/tmp",
        "SOURCE": "/run/cardshark/source",
    }
    monkeypatch.delenv("LANG")
    assert build_module._build_env()["LANG"] == "C.UTF-8"
    assert build_module._mounts(Path("/src"), Path("/srv/bots/alpha"), 12345) == [
        *("--perms", "0755", "--dir", "/run"),
        *("--perms", "0755", "--dir", "/run/cardshark"),
        *("--perms", "0755", "--dir", "/srv"),
        *("--perms", "0755", "--dir", "/srv/bots"),
        *("--ro-bind", "/src", "/run/cardshark/source"),
        *("--perms", "0777", "--size", "12345", "--tmpfs", "/srv/bots/alpha"),
    ]
    # The sandbox's own tmp and home are not made again.
    home = build_module._mounts(Path("/s"), Path("/home/bot/tree"), 1)
    assert [home[i + 1] for i, word in enumerate(home) if word == "--dir"] == [
        "/home",
        "/run",
        "/run/cardshark",
    ]
    limits = BuildLimits(time_s=7.9, memory_mb=300, pids=20, write_mb=5)
    assert build_module._bot_limits(limits, BotLimits(cpus=(1, 3))) == BotLimits(
        memory_mb=300, pids=20, cpu_s=8, open_files=1024, file_size_mb=5, tmp_mb=5, cpus=(1, 3)
    )


def test_the_tail_keeps_the_last_bytes_and_says_how_many_were_cut() -> None:
    tail = Tail(5)
    tail.add(b"abc")
    assert (tail.text(), tail.total) == ("abc", 3)
    tail.add(b"defg")
    assert tail.text() == "[cardshark: 2 bytes of output cut before this]\ncdefg"
    tail.add(b"\xff")
    assert tail.text() == "[cardshark: 3 bytes of output cut before this]\ndefg\ufffd"
    exact = Tail(3)
    exact.add(b"xyz")
    assert exact.text() == "xyz"


def reader(data: bytes) -> asyncio.StreamReader:
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    return stream


def read(data: bytes, cap: int = 1 << 20) -> tuple[Outcome, bytes, list[str]]:
    """The outcome of a result pipe carrying data, the tar spooled, and the stops asked."""
    stops: list[str] = []
    spool = io.BytesIO()
    out = Outcome()

    async def run() -> None:
        await read_result(reader(data), out, spool, cap, lambda: stops.append("stop"))

    asyncio.run(run())
    return out, spool.getvalue(), stops


def test_the_wrappers_report_is_read_line_by_line_then_the_tar() -> None:
    out, tar, stops = read(b"status 0\nfree 1000 2000 4096\nfree 7 100 4096\ntar\nTARBYTES\nmore")
    assert (out.copied, out.status, out.full, out.over) == (True, 0, False, False)
    assert out.tar_bytes == 13 and out.tar is not None and tar == b"TARBYTES\nmore" and stops == []
    out, tar, _ = read(b"copy failed\nstatus 12\n")
    assert (out.copied, out.status, out.tar, tar) == (False, 12, None, b"")
    # Words that are not the report's are ignored: an unknown line, a bad status or free line.
    out, _, _ = read(b"hello\nstatus x\nstatus 1 2\nfree 1 2\nfree a 2 3\ncopy failed now\n")
    assert (out.copied, out.status, out.full) == (True, None, False)
    out, _, _ = read(b"tar\n" + b"x" * 10, cap=10)
    assert (out.tar_bytes, out.over) == (10, False)


def test_a_tmpfs_is_full_below_a_mib_or_a_sixteenth_of_a_small_one() -> None:
    def full(line: str) -> bool:
        return read(f"{line}\n".encode())[0].full

    assert full("free 255 1000000 4096")  # 255 pages of 4 KiB: under 1 MiB
    assert not full("free 256 1000000 4096")  # exactly 1 MiB left
    assert full("free 99 1600 1024")  # a sixteenth of 1600 blocks is 100
    assert not full("free 100 1600 1024")
    assert not full("free 257 4096 4096")  # a sixteenth is 256 pages, more than 1 MiB
    out, _, _ = read(b"free 1 1600 1024\nfree 100000 160000 1024\n")
    assert out.full  # one full tmpfs of three is enough


def test_a_tar_past_its_cap_stops_the_build_and_is_not_kept_whole() -> None:
    out, tar, stops = read(b"status 0\ntar\n" + b"y" * (1 << 17), cap=1000)
    assert out.over and stops == ["stop"] and tar == b""
    assert out.tar_bytes == 1 << 16  # the first chunk read went past the cap
    out, tar, stops = read(b"tar\n" + b"y" * 1001, cap=1000)
    assert out.over and stops == ["stop"]


def test_the_log_is_read_to_its_end_into_the_tail() -> None:
    tail = Tail(1 << 20)
    data = bytes(range(256)) * 1000

    async def run() -> None:
        await read_log(reader(data), tail)

    asyncio.run(run())
    assert bytes(tail.kept) == data and tail.total == len(data)


def tar_of(members: list[tuple[str, bytes | None]]) -> io.BytesIO:
    """A tar of files (bytes) and directories (None), names as given."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return out


def test_the_built_tree_is_unpacked_with_its_names_normalised_and_its_size_checked(
    tmp_path: Path,
) -> None:
    spooled = tar_of([(".", None), ("./bin", None), ("./bin/bot", b"12345"), ("./a.txt", b"ab")])
    spooled.seek(7)  # read from its start whatever was read before
    into = tmp_path / "tree"
    into.mkdir()
    unpack_built(spooled, into, 7, "too big")
    assert (into / "bin" / "bot").read_bytes() == b"12345"
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*")) == [
        "a.txt",
        "bin",
        "bin/bot",
    ]
    over = tmp_path / "over"
    over.mkdir()
    with pytest.raises(ArchiveError, match="^too big$"):
        unpack_built(tar_of([("./a", b"1234"), ("./b", b"1234")]), over, 7, "too big")
    assert list(over.iterdir()) == []
    with pytest.raises(ArchiveError, match=r"^the built tree: member '\.\./x'"):
        unpack_built(tar_of([("../x", b"1")]), over, 100, "too big")
    with pytest.raises(ArchiveError, match="^the built tree cannot be unpacked: "):
        unpack_built(io.BytesIO(b"no tar at all" * 100), over, 100, "too big")


def test_a_link_out_of_the_built_tree_is_refused(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        link = tarfile.TarInfo("up")
        link.type, link.linkname = tarfile.SYMTYPE, "sub/.."
        sub = tarfile.TarInfo("sub")
        sub.type, sub.linkname = tarfile.SYMTYPE, ".."
        tar.addfile(link)
        tar.addfile(sub)
    into = tmp_path / "tree"
    into.mkdir()
    with pytest.raises(ArchiveError, match="^the built tree"):
        unpack_built(out, into, 100, "too big")


def test_a_trees_size_is_whole_pages_of_its_files_links_not_followed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "one").write_bytes(b"x")
    (tmp_path / "sub" / "page").write_bytes(b"x" * 4096)
    (tmp_path / "sub" / "more").write_bytes(b"x" * 4097)
    (tmp_path / "big").write_bytes(b"x" * 100_000)
    (tmp_path / "link").symlink_to(tmp_path / "big")  # its own few bytes: one page
    assert tree_pages(tmp_path) == (1 + 1 + 2 + 25 + 1) * 4096
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert tree_pages(tmp_path) == (1 + 1 + 2 + 25 + 2) * 4096


@pytest.fixture
def v2_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> BotCgroups:
    """A bot's v2 group in tmp_path standing in for /sys/fs/cgroup."""
    monkeypatch.setattr(cgroups, "_swept", True)
    root = tmp_path / "cardshark"
    monkeypatch.setattr(cgroups, "cgroup_root", lambda: ("v2", {"memory": root, "pids": root}))
    return BotCgroups("1-2", BotLimits())


def test_a_v2_quota_is_the_bots_own_group_with_cpu_max(v2_group: BotCgroups) -> None:
    here = v2_group.dirs["memory"]
    quota = CpuQuota("1-2", v2_group, 1.5)
    assert (here / "cpu.max").read_text() == "150000 100000"
    assert (here.parent / "cgroup.subtree_control").read_text() == "+cpu"
    assert (quota.made, quota.procs) == (None, None)  # nothing of its own to join or remove
    assert quota.wrap(["a", "b"]) == ["a", "b"]
    CpuQuota("1-2", v2_group, 0.001)
    assert (here / "cpu.max").read_text() == "1000 100000"  # the kernel's least quota
    (here / "cpu.max").unlink()
    CpuQuota("1-2", v2_group, 0)  # no quota
    CpuQuota("1-2", None, 2)  # no cgroups
    assert not (here / "cpu.max").exists()


def test_a_quota_group_is_joined_by_a_shell_and_removed_when_empty(tmp_path: Path) -> None:
    quota = CpuQuota("x", None, 1)
    group = tmp_path / "g"
    group.mkdir()
    quota.made, quota.procs = group, str(group / "cgroup.procs")
    argv = quota.wrap(["/bin/echo", "hi there"])
    assert argv[:2] == ["/bin/sh", "-c"]
    assert argv[3:] == ["sh", quota.procs, "/bin/echo", "hi there"]
    ran = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert ran.stdout == "hi there\n"
    assert (group / "cgroup.procs").read_text().strip().isdigit()
    (group / "cgroup.procs").unlink()
    quota.remove()
    assert not group.exists() and quota.made is None
    quota.remove()  # once only
    gone = CpuQuota("y", None, 1)
    gone.made = tmp_path / "never-made"
    gone.remove()
    assert gone.made is None


def test_a_shell_that_cannot_join_its_quota_runs_nothing(tmp_path: Path) -> None:
    quota = CpuQuota("x", None, 1)
    quota.procs = str(tmp_path / "missing" / "cgroup.procs")
    argv = quota.wrap(["/bin/echo", "ran"])
    ran = subprocess.run(argv, capture_output=True, text=True)
    assert ran.returncode == 125 and ran.stdout == ""


def test_quota_groups_of_gone_servers_are_swept_and_the_living_kept(tmp_path: Path) -> None:
    dead = 2**22 + 12345  # above the kernel's pid_max: no such process
    for name in (f"{dead}-1", f"{os.getpid()}-1", "build-1", f"{dead}", f"x{dead}-1"):
        (tmp_path / name).mkdir()
    (tmp_path / f"{dead}-2").mkdir()
    (tmp_path / f"{dead}-2" / "busy").write_text("")  # rmdir refuses: kept, no error
    sweep_quotas(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{os.getpid()}-1", "build-1", f"{dead}-2", f"x{dead}-1"]
    )
    sweep_quotas(tmp_path / "missing")  # no root: nothing to do


def test_a_cgroup_counter_is_read_from_the_first_file_that_has_it(tmp_path: Path) -> None:
    group = BotCgroups.__new__(BotCgroups)
    group.version, group.dirs = "v2", {"memory": tmp_path, "pids": tmp_path / "p"}
    (tmp_path / "memory.events").write_text("low 0\nhigh 3\noom 4\noom_kill 5\n")
    files = ("memory.events", "memory.oom_control")
    assert cgroup_counter(group, "memory", files, "oom_kill") == 5
    assert cgroup_counter(group, "memory", files, "oom") == 4
    assert cgroup_counter(group, "memory", files, "max") == 0
    assert cgroup_counter(group, "pids", ("pids.events",), "max") == 0  # no file
    assert cgroup_counter(group, "cpu", files, "oom_kill") == 0  # no such group
    assert cgroup_counter(None, "memory", files, "oom_kill") == 0
    (tmp_path / "memory.events").write_text("oom_kill many\n")
    (tmp_path / "memory.oom_control").write_text("under_oom 0\noom_kill 7\n")
    assert cgroup_counter(group, "memory", files, "oom_kill") == 7  # the next file's


def build_here(
    tmp_path: Path, command: str, limits: BuildLimits = LIMITS
) -> tuple[BuildResult, Path]:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    destination = tmp_path / "out" / "bot"
    return asyncio.run(build(source, command, destination, NO_SANDBOX, limits)), destination


def test_without_the_sandbox_a_build_runs_in_a_writable_copy_and_is_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET", "leak")
    source = tmp_path / "src"
    source.mkdir()
    (source / "given.txt").write_text("read-only source\n")
    (source / "given.txt").chmod(0o444)
    (source / "link").symlink_to("given.txt")
    command = (
        'echo more >> given.txt && echo "built in $PWD" && echo "${SECRET:-none} $LANG"'
        ' && test "$HOME" = "$TMPDIR" && test -d "$HOME" && test -z "${SOURCE+set}"'
        " && echo ok > made.txt"
    )
    result, destination = build_here(tmp_path, command)
    assert result.ok and result.reason == "built"
    log = result.log
    assert "built in " in log and "none " in log and "leak" not in log
    assert (destination / "given.txt").read_text() == "read-only source\nmore\n"
    assert (destination / "made.txt").read_text() == "ok\n"
    assert (destination / "link").is_symlink()
    for path in (destination, destination / "made.txt", destination / "given.txt"):
        assert not os.stat(path).st_mode & stat.S_IWUSR
    assert (source / "given.txt").read_text() == "read-only source\n"
    assert sorted(p.name for p in destination.parent.iterdir()) == ["bot"]  # no staging left


@pytest.mark.parametrize(
    ("command", "limits", "why"),
    [
        ("echo failing; exit 3", LIMITS, "exited with status 3"),
        ("kill -9 $$", LIMITS, "was killed by SIGKILL"),
        ("sleep 30", BuildLimits(time_s=0.3), "timed out after 0.3 s"),
        ("head -c 3000000 /dev/zero > big", BuildLimits(write_mb=1), "wrote more than 1 MiB"),
    ],
)
def test_without_the_sandbox_a_failed_build_leaves_nothing_and_says_why(
    tmp_path: Path, command: str, limits: BuildLimits, why: str
) -> None:
    result, destination = build_here(tmp_path, command, limits)
    assert not result.ok and result.reason == why
    assert list(destination.parent.iterdir()) == []
    assert result.seconds < 10


def test_a_build_writing_past_its_size_while_it_times_out_says_it_timed_out(
    tmp_path: Path,
) -> None:
    command = "head -c 3000000 /dev/zero > big; sleep 30"
    result, _ = build_here(tmp_path, command, BuildLimits(time_s=0.5, write_mb=1))
    assert result.reason == "timed out after 0.5 s"


def test_a_build_needs_a_source_directory_and_an_empty_destination(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        asyncio.run(build(tmp_path / "none", "true", tmp_path / "d", NO_SANDBOX, LIMITS))
    source = tmp_path / "src"
    source.mkdir()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep").write_text("mine")
    with pytest.raises(OSError):
        asyncio.run(build(source, "true", taken, NO_SANDBOX, LIMITS))
    assert (taken / "keep").read_text() == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    result = asyncio.run(build(source, "echo x > y", empty, NO_SANDBOX, LIMITS))
    assert result.ok and (empty / "y").read_text() == "x\n"


@pytest.fixture
def v1_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> BotCgroups:
    """A bot's v1 groups in tmp_path, and a v1 cpu controller beside them."""
    monkeypatch.setattr(cgroups, "_swept", True)
    roots = {kind: tmp_path / kind / "cardshark" for kind in ("memory", "pids")}
    monkeypatch.setattr(cgroups, "cgroup_root", lambda: ("v1", roots))
    cpu = tmp_path / "cpu"
    cpu.mkdir()
    (cpu / "cgroup.procs").write_text("")
    monkeypatch.setattr(build_quota, "CPU_V1", cpu)
    return BotCgroups("1-2", BotLimits())


def test_a_v1_quota_is_a_cpu_group_of_its_own_joined_and_removed(
    v1_group: BotCgroups, tmp_path: Path
) -> None:
    dead = tmp_path / "cpu" / "cardshark" / f"{2**22 + 1}-1"  # a gone server's: swept
    dead.mkdir(parents=True)
    quota = CpuQuota(f"{os.getpid()}-7", v1_group, 0.5)
    here = tmp_path / "cpu" / "cardshark" / f"{os.getpid()}-7"
    assert quota.made == here and quota.procs == str(here / "cgroup.procs")
    assert (here / "cpu.cfs_period_us").read_text() == "100000"
    assert (here / "cpu.cfs_quota_us").read_text() == "50000"
    assert not dead.exists()
    assert not (v1_group.dirs["memory"] / "cpu.max").exists()
    assert quota.wrap(["/bin/true"]) == [
        "/bin/sh",
        "-c",
        'echo $$ > "$1" || exit 125; shift; exec "$@"',
        "sh",
        str(here / "cgroup.procs"),
        "/bin/true",
    ]
    again = CpuQuota(f"{os.getpid()}-7", v1_group, 0.5)  # the group may be there already
    assert again.made == here
    for name in ("cpu.cfs_period_us", "cpu.cfs_quota_us", "cgroup.procs"):
        (here / name).unlink(missing_ok=True)  # the kernel's files go with the group
    quota.remove()
    assert not here.exists() and quota.made is None


def test_a_v1_machine_without_a_cpu_controller_gets_no_quota(
    v1_group: BotCgroups, tmp_path: Path
) -> None:
    (tmp_path / "cpu" / "cgroup.procs").unlink()
    quota = CpuQuota("1-7", v1_group, 0.5)
    assert (quota.made, quota.procs) == (None, None)
    assert not (tmp_path / "cpu" / "cardshark").exists()


def test_a_group_that_refuses_the_cpu_controller_gets_no_quota(
    v2_group: BotCgroups,
) -> None:
    here = v2_group.dirs["memory"]
    (here.parent / "cgroup.subtree_control").unlink()
    (here.parent / "cgroup.subtree_control").mkdir()  # writing it fails: no cpu controller
    quota = CpuQuota("1-2", v2_group, 1.0)
    assert (quota.made, quota.procs) == (None, None) and not (here / "cpu.max").exists()
    only_pids = BotCgroups.__new__(BotCgroups)
    only_pids.version, only_pids.dirs = "v2", {"pids": here}
    assert CpuQuota("1-2", only_pids, 1.0).procs is None  # no memory group: nothing to join


def test_removing_a_quota_group_still_in_use_retries_then_gives_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = tmp_path / "busy"
    group.mkdir()
    (group / "still-here").write_text("")  # rmdir refuses, as for a group with processes
    waits: list[float] = []
    monkeypatch.setattr("server.bots.build_quota.time.sleep", waits.append)
    quota = CpuQuota("x", None, 1)
    quota.made = group
    quota.remove()
    assert waits == [0.01] * 50 and quota.made is None and group.exists()


def test_the_wrappers_report_survives_bytes_that_are_not_ascii() -> None:
    out, tar, _ = read(b"\xff\xfe garbage\nstatus 4\n\xe9t\xe9\ntar\nT")
    assert (out.status, tar) == (4, b"T")
    assert not read(b"free 100 1615 1\n")[0].full  # a sixteenth rounded down: 100 is enough
    assert read(b"free 99 1615 1\n")[0].full


def test_a_tar_read_in_many_chunks_is_counted_whole() -> None:
    out, tar, stops = read(b"tar\n" + b"z" * 100_000)
    assert (out.tar_bytes, len(tar), out.over, stops) == (100_000, 100_000, False, [])
    out, tar, stops = read(b"tar\n" + b"z" * 100_000, cap=90_000)
    assert out.over and stops == ["stop"] and len(tar) == 1 << 16


def test_the_built_tree_must_be_a_plain_tar_and_loses_set_id_bits(tmp_path: Path) -> None:
    plain = tar_of([("./bot", b"#!/bin/sh\n")])
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("bot")
        info.size, info.mode = 3, 0o6755
        tar.addfile(info, io.BytesIO(b"abc"))
    into = tmp_path / "tree"
    into.mkdir()
    unpack_built(out, into, 100, "too big")
    assert stat.S_IMODE(os.stat(into / "bot").st_mode) & 0o6000 == 0
    zipped = io.BytesIO(gzip.compress(plain.getvalue()))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ArchiveError, match="^the built tree cannot be unpacked: "):
        unpack_built(zipped, other, 100, "too big")


def test_without_the_sandbox_a_build_runs_beside_its_destination_and_keeps_its_stderr(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "big.dat").write_bytes(b"s" * 800_000)  # the source's size is not written
    destination = tmp_path / "deep" / "er" / "bot"  # parents made
    command = 'echo "in $PWD"; echo oops >&2'
    result = asyncio.run(build(source, command, destination, NO_SANDBOX, BuildLimits(write_mb=1)))
    assert result.ok, result.reason
    where = Path(result.log.split("in ", 1)[1].split("\n", 1)[0])
    assert where.parent == destination.parent and where.name.startswith(".bot.build-")
    assert "oops\n" in result.log
    assert (destination / "big.dat").stat().st_size == 800_000


@pytest.mark.parametrize(
    ("command", "ok"),
    [
        # Each file under the file size limit, together over the write limit.
        ("for f in a b c; do head -c 400000 /dev/zero > $f; done", False),
        ("head -c 1048576 /dev/zero > exact", True),  # exactly the limit: allowed
    ],
)
def test_without_the_sandbox_what_a_build_writes_is_counted_whole(
    tmp_path: Path, command: str, ok: bool
) -> None:
    result, destination = build_here(tmp_path, command, BuildLimits(write_mb=1))
    assert (result.ok, result.reason) == (ok, "built" if ok else "wrote more than 1 MiB")
    assert destination.exists() == ok


def test_a_build_that_closes_its_output_early_is_waited_for(tmp_path: Path) -> None:
    command = "exec >/dev/null 2>&1; sleep 0.3; echo made > late"
    result, destination = build_here(tmp_path, command)
    assert result.ok and (destination / "late").read_text() == "made\n"


def test_the_first_v1_quota_makes_the_servers_cpu_group(
    v1_group: BotCgroups, tmp_path: Path
) -> None:
    assert not (tmp_path / "cpu" / "cardshark").exists()
    quota = CpuQuota("5-1", v1_group, 2)
    assert (tmp_path / "cpu" / "cardshark" / "5-1" / "cpu.cfs_quota_us").read_text() == "200000"
    assert quota.made == tmp_path / "cpu" / "cardshark" / "5-1"
