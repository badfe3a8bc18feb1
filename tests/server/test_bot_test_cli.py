"""`cardshark bot test` end to end: real bot processes against the house bots, nothing stored."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from google.protobuf import json_format

from cardshark.v1 import referee_pb2 as pb
from server.bots.sandbox import unavailable_reason
from server.match.runner import fallback_index
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
ONE_ILLEGAL = ROOT / "tests" / "server" / "bots" / "one_illegal.py"
NO_SHOW_S = 10.0  # the referee's default wait for a bot to connect


def cli(
    *args: str, db: str, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return run, time.monotonic() - start


def bot_test(
    db: str, logs: Path, name: str, *args: str, sandbox: str = "none"
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`cardshark bot test NAME --game knaves ARGS`, the stderr logs under logs."""
    return cli(
        "bot", "test", name, "--game", "knaves", "--sandbox", sandbox, "--log-dir", str(logs),
        *args, db=db,
    )  # fmt: skip


def add_bot(db: str, name: str, command: str | None = None) -> str:
    """Register a bot; returns its token."""
    extra = ["--command", command] if command is not None else []
    run, _ = cli("bot", "add", name, *extra, "--json", db=db)
    assert run.returncode == 0, run.stderr
    token: str = json.loads(run.stdout)["token"]
    return token


def stored_counts(db: str) -> tuple[int, int]:
    with Store(db) as store:
        return len(store.list_tournaments()), len(store.list_bots())


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cs.db'}"


def test_the_knaves_example_bot_passes_and_nothing_is_stored(db: str, tmp_path: Path) -> None:
    add_bot(db, "rules", shlex.join([sys.executable, str(EXAMPLES / "knaves_bot.py")]))
    before = stored_counts(db)
    run, _ = bot_test(db, tmp_path, "rules", "--seed", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert re.fullmatch(
        r"PASS: 3 matches, 0 faults, mean score -?\d+\.\d \(house bots -?\d+\.\d\)", lines[-1]
    ), lines[-1]
    played = [line for line in lines if line.startswith("match ")]
    # One match per seat, on the same deal, each ended with no fault of the tested bot.
    assert [re.findall(r"^match (\d) \(seat (\d), seed 3\)", m) for m in played] == [
        [("1", "0")],
        [("2", "1")],
        [("3", "2")],
    ]
    assert all(line.endswith("; 0 faults") for line in played)
    assert not [line for line in lines if line.startswith("fault")]
    assert stored_counts(db) == before


def test_an_illegal_answer_is_shown_with_the_request_that_caused_it(
    db: str, tmp_path: Path
) -> None:
    log = tmp_path / "illegal-request.hex"
    add_bot(db, "sloppy", shlex.join([sys.executable, str(ONE_ILLEGAL), str(log), "4"]))
    run, _ = bot_test(db, tmp_path, "sloppy", "--seed", "11")
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert out.splitlines()[-1] == "FAIL: 1 fault (illegal_action 1) in 3 matches"
    sent = pb.DecisionRequest.FromString(bytes.fromhex(log.read_text()))
    legal = [a.id for a in sent.legal_actions]
    (header,) = [line for line in out.splitlines() if line.startswith("fault in match ")]
    found = re.fullmatch(
        r"fault in match (\d), decision (\d+): illegal_action: action '(play:\w\w)' is not "
        r"legal now; legal: (.*)",
        header,
    )
    assert found is not None, header
    match, decision, answered = int(found[1]), int(found[2]), found[3]
    # The referee's own detail lists at most 12 legal actions.
    shown = ", ".join(legal[:12]) + (" …" if len(legal) > 12 else "")
    assert answered not in legal and found[4] == shown
    block = out.splitlines()[out.splitlines().index(header) + 1 :][:4]
    assert block[0] == f"  request {sent.request_id}, seat {sent.seat}:"
    view = json_format.MessageToDict(
        sent, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )["knaves"]
    assert block[1].startswith("  view: ")
    assert json.loads(block[1].removeprefix("  view: ")) == view
    assert block[2] == f"  legal: {', '.join(legal)}"
    # The referee's fallback is a function of the seed and the decision only.
    assert block[3] == f"  referee played: {legal[fallback_index(11, decision, len(legal))]}"
    assert sent.match_id == f"test-{match}" and sent.seat == (match - 1) % 3


def test_json_gives_the_fault_with_the_whole_request_as_sent(db: str, tmp_path: Path) -> None:
    log = tmp_path / "illegal-request.hex"
    add_bot(db, "sloppy", shlex.join([sys.executable, str(ONE_ILLEGAL), str(log), "2"]))
    run, _ = bot_test(db, tmp_path, "sloppy", "--matches", "1", "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] is False and report["fault_kinds"] == {"illegal_action": 1}
    (fault,) = report["faults"]
    sent = pb.DecisionRequest.FromString(bytes.fromhex(log.read_text()))
    assert fault["request"] == json_format.MessageToDict(
        sent, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    assert "seat" in fault["request"]  # seat 0 too: zeros are shown
    assert fault["legal"] == [a.id for a in sent.legal_actions]
    assert fault["fallback"] in fault["legal"]


SANDBOXES = [
    "none",
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(unavailable_reason() is not None, reason="no sandbox here"),
    ),
]


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(
    ("command", "status", "said"),
    [("false", 1, None), ("sh -c 'echo model file missing >&2; exit 3'", 3, "model file missing")],
)
def test_a_bot_that_cannot_start_fails_fast_with_its_status_and_stderr(
    db: str, tmp_path: Path, sandbox: str, command: str, status: int, said: str | None
) -> None:
    add_bot(db, "broken", command)
    run, took = bot_test(db, tmp_path, "broken", sandbox=sandbox)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert re.fullmatch(f"FAIL: broken exited with status {status} before [a-zA-Z ]+", lines[-1])
    # Waiting for the no-show takes NO_SHOW_S at least; the house's own start under a load
    # of 5 (2 cores) took up to 5.8 s.
    assert took < NO_SHOW_S * 0.9, f"took {took:.1f} s: waited for the no-show"
    tail = lines[lines.index(next(x for x in lines if x.startswith("broken's stderr"))) + 1 :]
    assert tail[:-1] == [f"  {said}" if said else "  (nothing)"]


def remote_test(db: str, tmp_path: Path) -> subprocess.Popen[str]:
    """`bot test far` (a remote bot) on any free port, one Knaves match, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", "bot", "test", "far", "--game", "knaves",
         "--matches", "1", "--port", "0", "--sandbox", "none",
         "--log-dir", str(tmp_path / "logs"), "--db", db],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_remote_bot_is_told_the_address_and_played_once_it_connects(
    db: str, tmp_path: Path
) -> None:
    token = add_bot(db, "far")
    proc = remote_test(db, tmp_path)
    bot = None
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        address = re.search(r"connect to (\S+) ", lines[1])
        assert address is not None, lines
        said = tmp_path / "bot.stderr"
        with said.open("w") as stderr:
            bot = subprocess.Popen(
                [sys.executable, str(EXAMPLES / "random_bot.py"), "--server", address[1],
                 "--token", token],
                stdout=subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip
        # The server waits minutes for a remote bot: a bot that fails ends the test at once.
        threading.Thread(target=lambda: bot.wait() and proc.kill(), daemon=True).start()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        if bot is not None:
            bot.kill()
            bot.wait()
    assert proc.returncode == 0, out + err + f"\nthe bot said: {said.read_text()}"
    assert out.splitlines()[-1].startswith("PASS: 1 match, 0 faults")


def test_a_remote_test_refuses_every_other_bot_and_says_why_at_once(
    db: str, tmp_path: Path
) -> None:
    token = add_bot(db, "far")
    other = add_bot(db, "near")
    proc = remote_test(db, tmp_path)
    bots: list[subprocess.Popen[str]] = []

    def connect(with_token: str) -> subprocess.Popen[str]:
        bot = subprocess.Popen(
            [sys.executable, str(EXAMPLES / "random_bot.py"), "--server", address,
             "--token", with_token],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        bots.append(bot)
        return bot

    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        found = re.search(r"connect to (\S+) ", lines[1])
        assert found is not None, lines
        address = found[1]
        stranger = connect("0" * 64)
        assert stranger.wait(60) == 2, stranger.communicate()
        assert proc.stdout.readline().strip() == (
            "refused a bot: its token is no registered bot's "
            "(give it far's token, from `cardshark bot add`)"
        )
        impostor = connect(other)
        assert impostor.wait(60) == 2
        assert "this test plays far" in impostor.communicate()[1]
        assert proc.stdout.readline().strip() == (
            "refused near: this test plays far, with far's token"
        )
        connect("0" * 64).wait(60)  # the same refusal again: said once
        connect(token)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        for bot in bots:
            bot.kill()
            bot.wait()
    assert proc.returncode == 0, out + err
    assert [line for line in out.splitlines() if line.startswith("refused")] == []
    assert out.splitlines()[-1].startswith("PASS: 1 match, 0 faults")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody", "--game", "knaves"], "error: no bot 'nobody'"),
        (["rules", "--game", "chess"], "error: unknown game 'chess'"),
        (["rules", "--game", "knaves", "--matches", "0"], "error: --matches must be at least 1"),
    ],
)
def test_bad_values_get_one_error_line_and_exit_2(db: str, args: list[str], message: str) -> None:
    add_bot(db, "rules", shlex.join([sys.executable, str(EXAMPLES / "knaves_bot.py")]))
    run, _ = cli("bot", "test", *args, "--sandbox", "none", db=db)
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(message), run.stderr
    assert run.stdout == ""
