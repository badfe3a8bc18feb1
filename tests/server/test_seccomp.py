"""A managed bot in C makes the system calls its seccomp filter denies, by raw syscall.

Two of them play a real tournament (the CLI, the sandbox, as every managed bot) with an honest
bot, under a server whose session keyring holds a planted key. Each denied call must fail
with EPERM (clone3 with ENOSYS), the planted key must be out of sight, neither prober may see
a key of the other, and nobody is charged a fault.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.bots.seccomp_filter import bot_filter, denied_calls, syscall_number
from tests.server.conftest import PYTHON, RANDOM_BOT, ROOT

PROBER = ROOT / "tests" / "server" / "bots" / "syscall_prober.c"
CARDSHARK = str(Path(sys.executable).with_name("cardshark"))
PLANTED = "cardshark-planted"
# What the prober tries, and the one answer each may get in the sandbox.
REFUSED = {
    "keyctl": "EPERM",
    "request_key": "EPERM",
    "add_key": "EPERM",
    "bpf": "EPERM",
    "perf_event_open": "EPERM",
    "userfaultfd": "EPERM",
    "io_uring_setup": "EPERM",
    "unshare-user": "EPERM",
    "unshare-net": "EPERM",
    "clone-user": "EPERM",
    "clone-pid": "EPERM",
    "clone3-user": "ENOSYS",
    "setns": "EPERM",
    "mount": "EPERM",
    "umount2": "EPERM",
    "kexec_file_load": "EPERM",
    "finit_module": "EPERM",
    "ptrace-child": "EPERM",
    "ptrace-parent": "EPERM",
    "process_vm_readv": "EPERM",
}
# What an honest bot needs: threads (clone3 refused, glibc falls back to clone), fork.
ALLOWED = ("fork", "thread", "clone-plain")
# The server's session keyring, as a login leaves it: a key of the server's user in it. It
# checks that the key is there before it runs the server.
PLANT = f"""
import ctypes, sys, os
syscall = ctypes.CDLL(None, use_errno=True).syscall
keyctl, add_key = int(sys.argv[1]), int(sys.argv[2])
assert syscall(keyctl, 1, None) > 0, os.strerror(ctypes.get_errno())
assert syscall(add_key, b"user", b"{PLANTED}", b"hunter2", 7, -3) > 0
assert "{PLANTED}" in open("/proc/keys").read()
os.execv(sys.argv[3], sys.argv[3:])
"""


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two probers and an honest bot in a Knaves round robin; what each prober reported."""
    gcc = shutil.which("gcc")
    assert gcc is not None, "gcc is needed to build the prober (CI installs it)"
    bot_dir = tmp_path_factory.mktemp("prober")
    bot_dir.chmod(0o755)  # pytest makes it 0700; the bot runs as a uid of its own
    binary = bot_dir / "syscall_prober"
    subprocess.run([gcc, "-O1", "-Wall", "-pthread", "-o", str(binary), str(PROBER)], check=True)
    server_dir = tmp_path_factory.mktemp("server")
    db_file = server_dir / "cardshark.db"
    env = dict(os.environ, CARDSHARK_DB=f"sqlite:///{db_file}", GRPC_VERBOSITY="NONE")
    prober = shlex.join([str(binary), PYTHON, RANDOM_BOT[1]])
    bots = {"prober-a": prober, "prober-b": prober, "honest": shlex.join(RANDOM_BOT)}
    for name, command in bots.items():
        added = subprocess.run(
            [CARDSHARK, "bot", "add", name, "--command", command],
            cwd=server_dir,
            env=env,
            capture_output=True,
            text=True,
        )
        assert added.returncode == 0, added.stderr
    keyring = [str(syscall_number("keyctl")), str(syscall_number("add_key"))]
    run = subprocess.run(
        [sys.executable, "-c", PLANT, *keyring, CARDSHARK, "tournament", "run", "knaves"]
        + ["--bots", "prober-a,prober-b,honest", "--seed", "11"],
        cwd=server_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    reports = {}
    for name in ("prober-a", "prober-b"):
        log = (server_dir / "logs" / "tournament-1" / f"{name}.stderr.log").read_text()
        reports[name] = re.findall(r"^PROBE ([\w-]+): (.*)$", log, re.M)
    with sqlite3.connect(db_file) as db:
        matches = db.execute("SELECT status, record FROM matches").fetchall()
    return {"run": run, "reports": reports, "matches": matches}


def test_every_denied_call_fails_and_an_honest_bot_still_plays(probed: dict[str, object]) -> None:
    run = probed["run"]
    assert isinstance(run, subprocess.CompletedProcess)
    assert run.returncode == 0, run.stderr
    reports = probed["reports"]
    assert isinstance(reports, dict)
    for name, lines in reports.items():
        assert lines, f"{name} reported nothing"
        outcomes: dict[str, set[str]] = {}
        for probe, outcome in lines:
            outcomes.setdefault(probe, set()).add(outcome)
        print(f"{name}, {sum(p == 'proc-keys' for p, _ in lines)} launches:")
        for probe, expected in REFUSED.items():
            print(f"  {probe}: {', '.join(sorted(outcomes.get(probe, {'missing'})))}")
            assert outcomes.get(probe) == {expected}, (name, probe, outcomes.get(probe))
        for probe in ALLOWED:
            assert outcomes.get(probe) == {"ok"}, (name, probe, outcomes.get(probe))
    matches = probed["matches"]
    assert isinstance(matches, list) and len(matches) == 6
    assert {status for status, _ in matches} == {"finished"}
    assert [f for _, record in matches for f in json.loads(record)["faults"]] == []


def test_the_servers_keys_are_out_of_sight_and_bots_share_none(
    probed: dict[str, object],
) -> None:
    reports = probed["reports"]
    assert isinstance(reports, dict)
    for name, lines in reports.items():
        for probe, outcome in lines:
            if probe == "proc-keys":
                # Its own new session keyring, empty: nothing of the server's login.
                assert outcome == "keyring:_ses", (name, outcome)
            if probe == "covert":
                assert outcome == "seen 0", (name, outcome)


def test_the_filter_is_libseccomps_and_names_what_docs_list() -> None:
    program = bot_filter()
    assert program and len(program) % 8 == 0  # struct sock_filter, as libseccomp exports it
    for name in ("keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd"):
        assert syscall_number(name) >= 0, name
    docs = (ROOT / "docs" / "security.md").read_text()
    missing = [name for name in denied_calls() if f"`{name}`" not in docs]
    assert missing == [], f"docs/security.md does not list {missing}"
