"""Workers' core claims: one core each while cores are free, the lock dies with the process,
the lock directory cannot be planted by another user, and pinning covers every thread."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from server.bots.cpu_pin import (
    AUTO,
    LOCK_DIR_ENV,
    NONE,
    CpuChoiceError,
    claim_cpu,
    lock_dir,
    parse_cpu,
    usable_cpus,
)

ROOT = Path(__file__).resolve().parents[2]
CPUS = usable_cpus()


def allowed_list(pid: int | str, task: int | str | None = None) -> str:
    """A process's (or one thread's) Cpus_allowed_list as /proc shows it."""
    base = Path(f"/proc/{pid}") / ("" if task is None else f"task/{task}")
    for line in (base / "status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("no Cpus_allowed_list")


def python_child(script: str) -> subprocess.Popen[str]:
    """A Python process running script (dedented) from the repository, stdin and stdout piped."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_this_machine_has_two_cores_to_pin_to() -> None:
    # The claims below need two; CI's machine has them. Fail loudly rather than skip.
    assert len(CPUS) >= 2, f"the tests need 2 usable cores, have {CPUS}"


def test_auto_claims_a_free_core_each_until_none_is_left(tmp_path: Path) -> None:
    claims = [claim_cpu(AUTO, tmp_path) for _ in CPUS]
    start = os.getpid() % len(CPUS)  # the scan starts at a core the pid picks
    assert [c.cpu for c in claims if c] == CPUS[start:] + CPUS[:start]
    assert all(c is not None and c.shared is False for c in claims)
    assert claim_cpu(AUTO, tmp_path) is None  # every core held: unpinned
    last = claims[-1]
    assert last is not None
    last.release()
    again = claim_cpu(AUTO, tmp_path)
    assert again is not None and again.cpu == last.cpu  # the freed core, and only it
    assert claim_cpu(NONE, tmp_path) is None


def test_workers_that_cannot_see_each_others_locks_spread_over_the_cores(
    tmp_path: Path,
) -> None:
    # Each in a lock directory of its own, as containers with their own /tmp would be.
    script = """
        import os, sys
        from pathlib import Path
        from server.bots.cpu_pin import claim_cpu
        print(claim_cpu("auto", Path(sys.argv[1])).cpu, os.getpid())
        """
    taken = []
    for n in range(2 * len(CPUS)):
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), str(tmp_path / str(n))],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        taken.append((int(out[0]), int(out[1]) % len(CPUS)))
    assert all(CPUS[start] == cpu for cpu, start in taken), taken


def test_a_core_held_by_another_process_is_skipped_and_freed_by_its_death(
    tmp_path: Path,
) -> None:
    holder = python_child(
        f"""
        import sys
        from pathlib import Path
        from server.bots.cpu_pin import claim_cpu
        claim = claim_cpu({CPUS[0]}, Path({str(tmp_path)!r}))
        print(claim.cpu, claim.shared, flush=True)
        sys.stdin.read()
        """
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().split() == [str(CPUS[0]), "False"]
        mine = claim_cpu(AUTO, tmp_path)
        assert mine is not None and mine.cpu != CPUS[0]  # never the held one
        asked = claim_cpu(CPUS[0], tmp_path)  # by number: pinned, and told it is shared
        assert asked is not None and (asked.cpu, asked.shared) == (CPUS[0], True)
        asked.release()  # it holds no lock: releasing closes no descriptor at all
        for fd in (0, 1, 2):
            os.fstat(fd)
    finally:
        holder.kill()  # kill -9: the kernel drops its lock
        holder.wait()
    after = claim_cpu(AUTO, tmp_path)
    assert after is not None and after.cpu == CPUS[0]
    mine.release()


def test_a_claims_lock_is_not_inherited_by_what_the_worker_starts(tmp_path: Path) -> None:
    claim = claim_cpu(AUTO, tmp_path)
    assert claim is not None
    assert not os.get_inheritable(claim._fd)


def test_a_core_asked_for_by_number_is_held_until_released_once(tmp_path: Path) -> None:
    where = tmp_path / "nested" / "locks"  # made, parents and all
    asked = claim_cpu(CPUS[0], where)
    assert asked is not None and (asked.cpu, asked.shared) == (CPUS[0], False)
    others = [claim_cpu(AUTO, where) for _ in CPUS[1:]]
    assert sorted(c.cpu for c in others if c) == CPUS[1:]  # auto skips the core asked for
    other = others[0]
    assert other is not None
    lock = where / f"cpu{CPUS[0]}.lock"
    assert lock.stat().st_mode & 0o777 == 0o600 and where.stat().st_mode & 0o777 == 0o700
    asked.release()
    asked.release()  # a second release closes nothing (not some other descriptor)
    for fd in (0, 1, 2, other._fd):
        os.fstat(fd)
    again = claim_cpu(AUTO, where)
    assert again is not None and again.cpu == CPUS[0]


def test_the_lock_directory_is_per_user_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCK_DIR_ENV, raising=False)
    assert lock_dir() == Path(tempfile.gettempdir()) / f"cardshark-cpus-{os.getuid()}"
    monkeypatch.setenv(LOCK_DIR_ENV, "/run/cardshark-cpus")
    assert lock_dir() == Path("/run/cardshark-cpus")


def test_a_lock_directory_another_user_could_plant_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    with pytest.raises(CpuChoiceError, match="not a directory of this user"):
        claim_cpu(AUTO, link)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(CpuChoiceError, match="writable by other users"):
        claim_cpu(AUTO, open_dir)
    planted = tmp_path / "planted"
    planted.mkdir()
    for cpu in CPUS:
        (planted / f"cpu{cpu}.lock").symlink_to(tmp_path / f"victim{cpu}")
    with pytest.raises(OSError):  # O_NOFOLLOW: no file is created through the link
        claim_cpu(AUTO, planted)
    assert not list(tmp_path.glob("victim*"))


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("two", "bad --cpu 'two'; allowed: auto (a core no other worker"),
        ("-1", "bad --cpu '-1'; allowed:"),
        ("999", "--cpu 999: this process may use cores " + ", ".join(map(str, CPUS)) + " only"),
    ],
)
def test_bad_cpu_values_name_the_value_and_what_is_allowed(given: str, said: str) -> None:
    with pytest.raises(CpuChoiceError) as err:
        parse_cpu(given)
    assert str(err.value).startswith(said)


def test_cpu_values_that_parse() -> None:
    assert parse_cpu("Auto") == AUTO and parse_cpu(" none") == NONE
    assert parse_cpu(str(CPUS[-1])) == CPUS[-1]


def test_pinning_covers_threads_started_before_and_processes_started_after() -> None:
    proc = python_child(
        f"""
        import subprocess, threading, time
        from server.bots.cpu_pin import pin_process
        ready, done = threading.Event(), threading.Event()
        def idle():
            ready.set()
            done.wait()
        thread = threading.Thread(target=idle)
        thread.start()
        ready.wait()
        pin_process({CPUS[-1]})
        child = subprocess.Popen(["sleep", "30"])
        print(child.pid, flush=True)
        input()
        child.kill()
        done.set()
        """
    )
    try:
        assert proc.stdout is not None
        child = proc.stdout.readline().strip()
        tasks = os.listdir(f"/proc/{proc.pid}/task")
        assert len(tasks) >= 2
        assert {allowed_list(proc.pid, t) for t in tasks} == {str(CPUS[-1])}
        assert allowed_list(child) == str(CPUS[-1])
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=30)
