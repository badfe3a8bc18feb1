"""A bot start that the sandbox itself fails (bwrap's own error, the machine's passing
trouble) is tried again before the run stops; if it persists, the stop names what was
played and rated before, never "nothing" when something was."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.play.preflight import sandbox_failed
from tournaments.models import MatchStatus
from tournaments.ratings import SeatOutcome
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
BOTS = {
    "rules": f"{sys.executable} {EXAMPLES / 'knaves_bot.py'}",
    "rand1": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
    "rand2": f"{sys.executable} {EXAMPLES / 'random_bot.py'}",
}
BWRAP_ERROR = "bwrap: Can't read /proc/sys/kernel/overflowuid: Too many open files"


def fake_bwrap(tmp_path: Path, failures: int) -> dict[str, str]:
    """An environment whose bwrap is real at the command's first call (its check that a
    sandbox can be built), fails like the real one the next `failures` times, then is real."""
    real = shutil.which("bwrap")
    assert real is not None, "bubblewrap is needed (.ci/run installs it)"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    count = tmp_path / "bwrap-calls"
    script = bin_dir / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        # Counted under a lock: bots start at once, and two appends before either count
        # would both read the later number (the failure then never happens).
        f'exec 9>>"{count}.lock"\n'
        "flock 9\n"
        f'echo x >> "{count}"\n'
        f'n=$(wc -l < "{count}")\n'
        "flock -u 9\n"
        "exec 9>&-\n"
        f'if [ "$n" -gt 1 ] && [ "$n" -le {failures + 1} ]; then\n'
        f'  echo "{BWRAP_ERROR}" >&2; exit 1\n'
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def cli(db: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=Path(db.removeprefix("sqlite:///")).parent,  # its logs/ too
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def new_db(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    for name, command in BOTS.items():
        assert cli(db, "bot", "add", name, "--command", command).returncode == 0
    return db


def finished(db: str) -> int:
    with Store(db) as store:
        return sum(1 for m in store.matches(1) if m.status == MatchStatus.FINISHED.value)


def test_a_start_the_sandbox_failed_once_is_retried_and_the_run_plays_on(tmp_path: Path) -> None:
    db = new_db(tmp_path)
    env = fake_bwrap(tmp_path, failures=1)
    run = cli(db, "tournament", "run", "knaves", "--bots", ",".join(BOTS), env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert finished(db) == 6
    calls = (tmp_path / "bwrap-calls").read_text().count("x")
    assert calls == 1 + 1 + len(BOTS)  # the check, the failed start, then one each


def test_a_lasting_sandbox_failure_stops_the_run_with_the_true_counts(tmp_path: Path) -> None:
    db = new_db(tmp_path)
    made = cli(db, "tournament", "run", "knaves", "--bots", ",".join(BOTS), "--rounds", "2",
               "--create-only")  # fmt: skip
    assert made.returncode == 0, made.stderr
    with Store(db) as store:  # the first set played and rated by an earlier run
        for m in store.pending_matches(1)[:6]:
            store.record_result(m.id or 0, [SeatOutcome(s) for s in (3, 2, 1)])
        rated = {b: (r.mu, r.sigma) for b, r in store.ratings("knaves").items()}
    assert len(rated) == 3
    env = fake_bwrap(tmp_path, failures=10_000)
    run = cli(db, "tournament", "resume", "1", env=env)
    assert run.returncode == 2, run.stdout + run.stderr
    err = run.stderr
    assert "nothing was played or rated" not in err
    assert (
        "tournament 1 stopped before this run's first match: 6 match(es) played and rated "
        "before it stand, nothing more was played"
    ) in err
    assert "exited with status 1 before saying Hello (3 tries; the sandbox failed)" in err
    assert BWRAP_ERROR in err
    assert "Traceback" not in err
    assert finished(db) == 6
    with Store(db) as store:
        assert {b: (r.mu, r.sigma) for b, r in store.ratings("knaves").items()} == rated


@pytest.mark.parametrize(
    ("last_line", "retried"),
    [
        ("bwrap: Can't read /proc/sys/kernel/overflowuid: No such file or directory", True),
        ("setpriv: setresuid failed: Operation not permitted", True),
        ("setpriv: failed to execute nosuchprog: No such file or directory", False),
        ("bwrap: execvp nosuchprog: No such file or directory", False),
        ("Traceback: the bot's own error", False),
    ],
)
def test_only_the_sandboxs_own_failures_are_retried_not_a_missing_program(
    last_line: str, retried: bool
) -> None:
    assert sandbox_failed(["earlier line", last_line]) is retried
    assert sandbox_failed([]) is False
