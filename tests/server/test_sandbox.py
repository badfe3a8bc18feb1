"""A hostile managed bot in the sandbox: every attack fails or is contained, by its evidence."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.bots.cgroups import cgroup_root, sweep_stale_cgroups
from server.bots.sandbox import (
    SandboxPolicy,
    bot_directory,
    clean_environment,
    unavailable_reason,
)
from tests.server.conftest import RANDOM_BOT, ROOT

ATTACKER = ROOT / "tests" / "server" / "bots" / "attacker.py"
CARDSHARK = str(Path(sys.executable).with_name("cardshark"))
ADMIN_SECRET = "admin-secret-4f1c9e"
SLEEPER = "987654321"
CORES = sorted(os.sched_getaffinity(0))


def host_processes_with(marker: str) -> list[int]:
    """Pids on this machine whose command line holds marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry))
    return found


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_this_machine_can_build_the_sandbox() -> None:
    # CI installs bubblewrap; if this fails every sandbox test below would prove nothing.
    assert unavailable_reason() is None


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A Knaves round robin of the attacker and two honest bots, run by the real CLI."""
    server_dir = tmp_path_factory.mktemp("server")
    db_file = server_dir / "cardshark.db"
    victim = server_dir / "victim.txt"
    victim.write_text("the server's own file\n")
    canary = socket.socket()
    canary.bind(("127.0.0.1", 0))
    canary.listen(8)
    canary.setblocking(False)
    port = canary.getsockname()[1]
    env = dict(
        os.environ,
        CARDSHARK_ADMIN_TOKEN=ADMIN_SECRET,
        CARDSHARK_DB=f"sqlite:///{db_file}",
        GRPC_VERBOSITY="NONE",
    )

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        pin = ["taskset", "-c", args[1]] if args[0] == "--cores" else []
        return subprocess.run(
            [*pin, CARDSHARK, *args[2 if pin else 0 :]],
            cwd=server_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )

    attacker = [sys.executable, str(ATTACKER), str(db_file), str(server_dir), str(port)]
    assert cli("bot", "add", "attacker", "--command", shlex.join(attacker)).returncode == 0
    for name in ("honest1", "honest2"):
        assert cli("bot", "add", name, "--command", shlex.join(RANDOM_BOT)).returncode == 0
    victim_before = digest(victim)
    # On the last core, as a pinned worker runs: its bots may not take another core.
    run = cli(
        "--cores",
        str(CORES[-1]),
        "tournament",
        "run",
        "knaves",
        "--bots",
        "attacker,honest1,honest2",
        "--seed",
        "7",
        "--move-ms",
        "3000",
        "--bot-memory",
        "512",
        "--bot-pids",
        "48",
    )
    try:
        canary.accept()
        dialled = True
    except BlockingIOError:
        dialled = False
    canary.close()
    log = (server_dir / "logs" / "tournament-1" / "attacker.stderr.log").read_text()
    with sqlite3.connect(db_file) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        matches = db.execute("SELECT status, seats, record FROM matches ORDER BY id").fetchall()
        bots = dict(db.execute("SELECT id, name FROM bots").fetchall())
    return {
        "run": run,
        "log": log,
        "attacks": dict(re.findall(r"^ATTACK ([\w-]+): (.*)$", log, re.M)),
        "tables": tables,
        "matches": matches,
        "bots": bots,
        "victim_changed": digest(victim) != victim_before,
        "server_dir": server_dir,
        "dialled": dialled,
        "leftovers": host_processes_with(SLEEPER),
    }


def test_the_tournament_finishes_and_honest_bots_are_never_charged(
    attacked: dict[str, object],
) -> None:
    import json

    run = attacked["run"]
    assert isinstance(run, subprocess.CompletedProcess)
    assert run.returncode == 0, run.stderr
    matches = attacked["matches"]
    assert isinstance(matches, list) and len(matches) == 6
    bots = attacked["bots"]
    assert isinstance(bots, dict)
    charged = []
    for status, seats, record in matches:
        assert status == "finished"
        seat_names = [bots[b] for b in json.loads(seats)]
        for fault in json.loads(record)["faults"]:
            charged.append((seat_names[fault["seat"]], fault["kind"]))
    assert all(name == "attacker" for name, _ in charged), charged
    # The 4 GiB allocation in its third match is the attacker's own crash.
    assert ("attacker", "disconnected") in charged


def test_the_environment_holds_no_server_secret(attacked: dict[str, object]) -> None:
    log = attacked["log"]
    assert isinstance(log, str)
    env = attacked["attacks"]["env"]  # type: ignore[index]
    assert "CARDSHARK_TOKEN" in env
    assert ADMIN_SECRET not in log
    assert "CARDSHARK_DB" not in env and "cardshark.db" not in env
    assert set(re.findall(r"'(\w+)':", env)) == {
        "CARDSHARK_SERVER",
        "CARDSHARK_TOKEN",
        "HOME",
        "PATH",
        "LANG",
        "TMPDIR",
        "PWD",
    }
    assert f"'PWD': '{ATTACKER.parent}'" in env  # its own directory, never the server's


def test_the_database_and_the_servers_files_are_out_of_reach(
    attacked: dict[str, object],
) -> None:
    attacks = attacked["attacks"]
    assert isinstance(attacks, dict)
    for name in ("db-write", "db-append", "server-dir"):
        assert attacks[name].startswith("refused"), (name, attacks[name])
    assert "pwned" not in attacked["tables"]  # type: ignore[operator]
    assert attacked["victim_changed"] is False
    server_dir = attacked["server_dir"]
    assert isinstance(server_dir, Path)
    assert not (server_dir / "pwned.txt").exists()


def test_other_bots_are_invisible_and_out_of_signal_reach(attacked: dict[str, object]) -> None:
    attacks = attacked["attacks"]
    assert isinstance(attacks, dict)
    assert "random_bot.py" not in attacks["proc"]
    assert "tokens of others: 0" in attacks["proc"]
    assert "takeover" not in attacks
    # It may signal only what it started itself (nothing yet): no other process of the host.
    assert attacks["signal"] in ("succeeded 'signalled []'",)


def test_the_network_is_gone_and_processes_are_capped(attacked: dict[str, object]) -> None:
    attacks = attacked["attacks"]
    assert isinstance(attacks, dict)
    assert attacks["dial-out"].startswith("refused")
    assert attacked["dialled"] is False
    forks = re.search(r"fork refused after (\d+) children", attacks["fork"])
    assert forks is not None, attacks["fork"]
    assert int(forks.group(1)) < 48
    assert "survived" not in attacks.get("memory", "")


def test_a_bot_cannot_leave_the_cores_of_the_process_that_started_it(
    attacked: dict[str, object],
) -> None:
    # The cpuset cgroup holds it: asking for every core leaves it on the server's one.
    assert len(CORES) >= 2, f"the attack needs 2 usable cores, have {CORES}"
    assert attacked["attacks"]["cores"] == f"succeeded '{CORES[-1]}'"  # type: ignore[index]


def test_setsid_children_do_not_outlive_the_bot(attacked: dict[str, object]) -> None:
    assert attacked["attacks"]["setsid"].startswith("succeeded")  # type: ignore[index]
    assert attacked["leftovers"] == []


def test_the_bot_directory_and_environment_rules() -> None:
    policy = SandboxPolicy()
    assert bot_directory([sys.executable, str(ATTACKER)], policy) == ATTACKER.parent
    assert bot_directory(["/bin/true"], policy) is None
    env = clean_environment("unix:/run/x.sock", "tok", sandboxed=True)
    assert env["CARDSHARK_SERVER"] == "unix:/run/x.sock" and env["HOME"] == "/home/bot"


def cardshark(cwd: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GRPC_VERBOSITY="NONE", CARDSHARK_DB=f"sqlite:///{cwd / 'cs.db'}")
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [CARDSHARK, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_without_bwrap_a_tournament_with_managed_bots_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    for name in ("a", "b", "c"):
        added = cardshark(tmp_path, "bot", "add", name, "--command", shlex.join(RANDOM_BOT))
        assert added.returncode == 0, added.stderr
    run = cardshark(tmp_path, "tournament", "run", "knaves", "--bots", "a,b,c", path="/nonexistent")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "bwrap is not installed" in lines[0] and "--sandbox none" in lines[0]
    listed = cardshark(tmp_path, "tournament", "list", "--json")
    assert listed.stdout.strip() == "[]", "a refused run must leave no tournament behind"


def test_sandbox_none_warns_and_plays(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        added = cardshark(tmp_path, "bot", "add", name, "--command", shlex.join(RANDOM_BOT))
        assert added.returncode == 0, added.stderr
    run = cardshark(
        tmp_path,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "a,b,c",
        "--sandbox",
        "none",
        "--seed",
        "3",
    )
    assert run.returncode == 0, run.stderr
    assert "unsandboxed" in run.stderr
    assert "Standings of tournament 1" in run.stdout
    # Progress (plain lines on stderr, as it is not a terminal) shows the matches in flight
    # against the runner's current limit.
    assert re.search(r"at once \d+/\d+", run.stderr), run.stderr


def test_an_unknown_sandbox_names_the_allowed_ones(tmp_path: Path) -> None:
    run = cardshark(tmp_path, "tournament", "run", "knaves", "--bots", "a,b,c", "--sandbox", "x")
    assert run.returncode == 2
    assert "unknown sandbox 'x'; allowed: bwrap, none" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_empty_cgroups_of_a_server_that_is_gone_are_swept() -> None:
    # kill -9 of a server: the kernel kills its bots, but their groups stay until swept.
    roots = sorted(set(cgroup_root()[1].values()))
    assert roots, "no writable cgroup controller: the bots' limits would be rlimits only"
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = [root / f"{gone.pid}-0" for root in roots]
    busy = roots[0] / f"{gone.pid}-1"
    kept = [root / f"{os.getpid()}-777" for root in roots] + [roots[0] / "not-a-bot"]
    for group in [*stale, busy, *kept]:
        group.mkdir(parents=True)
    if (busy / "cpuset.cpus").exists():  # a v1 cpuset takes no process before its cores
        (busy / "cpuset.cpus").write_text((busy.parent / "cpuset.cpus").read_text())
        (busy / "cpuset.mems").write_text((busy.parent / "cpuset.mems").read_text())
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (busy / "cgroup.procs").write_text(str(sleeper.pid))
        assert not set(sweep_stale_cgroups(min_age_s=3600)) & {*stale, busy}  # too young
        assert all(g.exists() for g in [*stale, busy, *kept])
        removed = set(sweep_stale_cgroups(min_age_s=0))
        assert set(stale) <= removed and busy not in removed and not removed & set(kept)
        assert busy.exists() and not any(g.exists() for g in stale)
        sleeper.kill()
        sleeper.wait()
        assert busy in sweep_stale_cgroups(min_age_s=0)  # empty now: swept
    finally:
        sleeper.kill()
        for group in [busy, *stale, *kept]:
            with contextlib.suppress(OSError):
                group.rmdir()


def test_a_bot_inherits_no_descriptor_but_its_stdio_and_its_own_socket(
    attacked: dict[str, object],
) -> None:
    # Anything more (another bot's socket, the database, a duplicate of its own socket that
    # would hide its closing it) is a leak: an event loop whose spawn does not close
    # inherited descriptors (uvloop's libuv) leaves several.
    fds = attacked["attacks"]["fds"]  # type: ignore[index]
    found = re.fullmatch(
        r"succeeded '0=/dev/null 1=/dev/null 2=pipe:\[\d+\] 3=socket:\[\d+\]'", fds
    )
    assert found is not None, fds
