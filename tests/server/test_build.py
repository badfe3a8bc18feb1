"""A submitted bot's build in the real sandbox (bubblewrap, cgroups, seccomp) with real g++:
what builds is there read-only, what fails says why, and nothing a build does outlives it or
lands outside its destination. After every test no uid slot, cgroup or process is left."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from server.bots import sandbox
from server.bots.archive import make_read_only
from server.bots.build import BuildLimits, BuildResult, build
from server.bots.cgroups import cgroup_root
from server.bots.sandbox import NO_SANDBOX, UID_BASE, SandboxPolicy
from server.cli import app
from tests.server.test_sandbox import host_processes_with

POLICY = SandboxPolicy()
QUICK = BuildLimits(time_s=20, memory_mb=512, pids=64, write_mb=32)
BOT_CPP = """#include <cstdio>
int main() { std::puts("built and running"); return 0; }
"""


def our_cgroups() -> list[Path]:
    """Cgroups of this process's bots and builds that still exist."""
    roots = {*cgroup_root()[1].values(), Path("/sys/fs/cgroup/cpu/cardshark")}
    mine = f"{os.getpid()}-"
    return [g for r in roots if r.is_dir() for g in r.iterdir() if g.name.startswith(mine)]


@pytest.fixture(autouse=True)
def nothing_left_behind() -> Iterator[None]:
    yield
    assert sandbox._slots_in_use == set()
    assert our_cgroups() == []


def source_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A read-only source tree, as the code cache unpacks one."""
    source = tmp_path / "source"
    source.mkdir()
    for name, text in files.items():
        (source / name).write_text(text)
    make_read_only(source)
    return source


def run(source: Path, command: str, dest: Path, limits: BuildLimits = QUICK) -> BuildResult:
    return asyncio.run(build(source, command, dest, POLICY, limits))


def no_leftovers(dest: Path) -> None:
    """A failed build leaves neither destination nor its staging directory."""
    assert not dest.exists()
    assert [p.name for p in dest.parent.iterdir() if p.name.startswith(f".{dest.name}")] == []


def test_a_cpp_bot_built_by_gpp_is_there_read_only(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"bot.cpp": BOT_CPP})
    dest = tmp_path / "built"
    result = run(source, "g++ -O2 -o bot bot.cpp && id -u", dest)
    assert (result.ok, result.reason) == (True, "built"), result.log
    uid = int(result.log.split()[-1])
    assert uid >= UID_BASE  # the build ran as a uid of its own, not as root
    binary = dest / "bot"
    assert stat.S_IMODE(binary.stat().st_mode) == 0o555
    assert stat.S_IMODE((dest / "bot.cpp").stat().st_mode) == 0o444
    assert stat.S_IMODE(dest.stat().st_mode) == 0o555
    assert sorted(p.name for p in dest.iterdir()) == ["bot", "bot.cpp"]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=10)
    assert ran.stdout == "built and running\n"
    assert sorted(p.name for p in source.iterdir()) == ["bot.cpp"]  # the source is untouched
    assert 0 < result.seconds < 20


def test_a_compile_error_fails_with_the_compilers_words(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"bot.cpp": "int main() { return undeclared_name; }\n"})
    dest = tmp_path / "built"
    result = run(source, "g++ -O2 -o bot bot.cpp", dest)
    assert (result.ok, result.reason) == (False, "exited with status 1")
    assert "bot.cpp:1:21: error:" in result.log
    assert "undeclared_name" in result.log and "was not declared in this scope" in result.log
    no_leftovers(dest)


def test_a_build_that_dials_out_fails_and_its_log_says_why(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"
    dial = "import socket; socket.create_connection(('1.1.1.1', 80), timeout=2)"
    result = run(source, f'python3 -c "{dial}"', dest)
    assert (result.ok, result.reason) == (False, "exited with status 1")
    assert "Network is unreachable" in result.log, result.log
    no_leftovers(dest)


def test_forks_stop_at_the_pids_limit(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"forks.py": FORKS})
    dest = tmp_path / "built"
    result = run(source, "python3 forks.py", dest, BuildLimits(time_s=20, pids=20))
    assert not result.ok and result.reason.startswith("exited with status 3 ("), result.reason
    assert "forks refused at the limit of 20 processes" in result.reason
    forked = int(re.findall(r"forked (\d+) then", result.log)[0])
    assert 5 < forked < 20
    assert "Resource temporarily unavailable" in result.log
    assert host_processes_with("sleeper-of-forks-py") == []  # its sleeping children died too
    no_leftovers(dest)


FORKS = """import os, sys, time
n = 0
try:
    while True:
        if os.fork() == 0:
            sys.argv[0] = "sleeper-of-forks-py"
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as exc:
    print("forked", n, "then", exc, flush=True)
    raise SystemExit(3)
"""


def test_a_fork_bomb_is_killed_whole_at_the_time_limit(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"
    bomb = "bomb_c4f1e"  # the bomb's every process carries this in its command line
    command = f"{bomb}() {{ {bomb} | {bomb} & }}; {bomb}; while :; do :; done"
    result = run(source, command, dest, BuildLimits(time_s=3, pids=32))
    assert not result.ok
    # Killed at the time limit, or ended sooner when the bomb's first shell could not fork
    # (dash gives up then): either way every fork past 32 was refused and counted.
    assert re.match(r"(timed out after 3 s|exited with status 2) \(", result.reason), result.reason
    assert "forks refused at the limit of 32 processes" in result.reason
    assert result.seconds < 6
    assert host_processes_with(bomb) == []
    no_leftovers(dest)


def test_a_build_past_its_time_is_killed(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"
    result = run(source, "echo compiling; sleep 61.75", dest, BuildLimits(time_s=1.5))
    assert (result.ok, result.reason) == (False, "timed out after 1.5 s")
    # The shell may say "Killed" of its sleep before it is killed itself.
    assert result.log in ("compiling\n", "compiling\nKilled\n"), result.log
    assert 1.5 <= result.seconds < 4
    assert host_processes_with("61.75") == []
    no_leftovers(dest)


def test_writing_more_than_write_mb_fails(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    limits = BuildLimits(time_s=20, write_mb=8)
    # Many files, each under the limit: the tree's tmpfs fills up.
    many = "for i in 1 2 3 4 5 6; do head -c 3000000 /dev/zero > part$i || exit 1; done"
    result = run(source, many, tmp_path / "many", limits)
    assert (result.ok, result.reason) == (False, "wrote more than 8 MiB"), result.log
    assert "No space left on device" in result.log
    no_leftovers(tmp_path / "many")
    # One file over it, in $TMPDIR: the file size limit.
    one = 'head -c 20000000 /dev/zero > "$TMPDIR/big"'
    result = run(source, one, tmp_path / "one", limits)
    assert (result.ok, result.reason) == (False, "wrote more than 8 MiB"), result.log
    assert "File too large" in result.log
    no_leftovers(tmp_path / "one")
    # Under it, the same build passes.
    result = run(source, "head -c 3000000 /dev/zero > part", tmp_path / "fits", limits)
    assert result.ok and (tmp_path / "fits" / "part").stat().st_size == 3000000


def test_a_build_over_its_memory_is_killed(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"
    grab = 'python3 -c "x = bytearray(300 << 20); print(len(x))"'
    result = run(source, grab, dest, BuildLimits(time_s=20, memory_mb=96))
    assert (result.ok, result.reason) == (False, "killed: out of memory (limit 96 MiB)")
    no_leftovers(dest)


def test_nothing_escapes_destination(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"
    host = tmp_path / "host-file"
    writes = [
        "../escaped",
        str(host),
        "/etc/escaped",
        "/root/escaped",
        f"{source}/escaped",
        "/run/cardshark/source/escaped",
    ]
    command = "; ".join(f"echo x > {w}" for w in writes) + "; echo inside > made; true"
    result = run(source, command, dest)
    assert result.ok, result.log
    assert result.log.count("cannot create") == 6  # each refused: not mounted, or not its own
    assert not (tmp_path / "escaped").exists() and not host.exists()
    assert not Path("/etc/escaped").exists() and not Path("/root/escaped").exists()
    assert sorted(p.name for p in source.iterdir()) == ["README"]
    assert sorted(p.name for p in dest.iterdir()) == ["README", "made"]
    # Links out of the tree are refused when the tree is read out, and nothing is kept.
    for link in ("ln -s /etc/passwd leak", "ln -s .. up", "mkfifo pipe"):
        result = run(source, link, tmp_path / "linked")
        assert not result.ok and result.reason.startswith("the built tree: member "), result
        assert result.reason.endswith("; refused")
        no_leftovers(tmp_path / "linked")


def test_the_log_keeps_its_tail_and_says_what_was_cut(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    limits = BuildLimits(time_s=20, log_bytes=1000)
    result = run(source, "seq 1 5000; seq 1 3 >&2", tmp_path / "built", limits)
    assert result.ok
    total = len("".join(f"{i}\n" for i in range(1, 5001))) + len("1\n2\n3\n")
    head, _, body = result.log.partition("\n")
    assert head == f"[cardshark: {total - 1000} bytes of output cut before this]"
    assert len(body) == 1000 and body.endswith("4999\n5000\n1\n2\n3\n")


def test_without_the_sandbox_a_c_bot_still_builds(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"bot.c": "int main(void) { return 0; }\n"})
    dest = tmp_path / "built"
    result = asyncio.run(build(source, "gcc -o bot bot.c", dest, NO_SANDBOX, QUICK))
    assert (result.ok, result.reason) == (True, "built"), result.log
    assert stat.S_IMODE((dest / "bot").stat().st_mode) == 0o555
    too_much = "head -c 40000000 /dev/zero > big"
    result = asyncio.run(build(source, too_much, tmp_path / "big", NO_SANDBOX, QUICK))
    assert (result.ok, result.reason) == (False, "wrote more than 32 MiB")
    no_leftovers(tmp_path / "big")


def test_runtimes_lists_python3_with_its_version() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["runtimes"])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert any(re.fullmatch(r"python3 +Python 3\.\d+\.\d+.*", line) for line in lines), lines
    assert any(line.startswith("g++ ") for line in lines)
    assert all(len(line) <= 80 for line in lines)
    as_json = runner.invoke(app, ["runtimes", "--json"])
    found = {r["name"]: r for r in json.loads(as_json.output)}
    assert found["python3"]["offered"] and found["python3"]["version"].startswith("Python 3.")
    assert found["python3"]["kind"] == "interpreter"


def test_a_cancelled_build_leaves_nothing(tmp_path: Path) -> None:
    source = source_tree(tmp_path, {"README": "no code\n"})
    dest = tmp_path / "built"

    async def cancel_while_running() -> None:
        task = asyncio.create_task(build(source, "sleep 61.25", dest, POLICY, QUICK))
        async with asyncio.timeout(10):
            while not host_processes_with("sleep\x0061.25\x00"):  # the sleep itself runs
                await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_running())
    assert host_processes_with("61.25") == []
    no_leftovers(dest)
