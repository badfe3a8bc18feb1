"""What the commands say is true (issue 31, item 7): --db takes a plain path, no command makes
a folder unasked, `bot add` and `bot update` name the database they wrote, a remote bot is told
a command per kit that connects it, a failing `bot test` names the bot's stderr log, and a
port in use names the port and the option that changes it."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
RANDOM = shlex.join([sys.executable, str(EXAMPLES / "random_bot.py")])
ONE_ILLEGAL = ROOT / "tests" / "server" / "bots" / "one_illegal.py"
KITS = ("Python", "Node", "C++", "stdio bridge")


def cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def error_line(run: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a refused command (exit 2; --sandbox none warns besides)."""
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_db_takes_a_plain_path_for_bot_add_and_rankings(tmp_path: Path) -> None:
    added = cli("bot", "add", "a", "--command", RANDOM, "--db", "./plain.db", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines()[0] == "bot a registered (id 1), stored in ./plain.db"
    absolute = tmp_path / "absolute.db"
    added = cli("bot", "add", "b", "--db", str(absolute), "--json", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["database"] == str(absolute)
    for db, name in (("./plain.db", "a"), (str(absolute), "b")):
        listed = cli("bot", "list", "--json", "--db", db, cwd=tmp_path)
        assert [b["name"] for b in json.loads(listed.stdout)] == [name], listed.stderr
        ranked = cli("rankings", "knaves", "--db", db, cwd=tmp_path)
        assert ranked.returncode == 0, ranked.stderr
    with Store(f"sqlite:///{tmp_path / 'plain.db'}") as store:
        assert [b.name for b in store.list_bots()] == ["a"]


def test_a_bad_db_value_is_one_line_naming_it_and_what_db_takes(tmp_path: Path) -> None:
    for value in ("postgresql:/cards", "nosuchdialect://x/y"):
        line = error_line(cli("bot", "add", "x", "--db", value, cwd=tmp_path))
        assert f"'{value}'" in line and "a SQLite file's path" in line, line
    assert list(tmp_path.iterdir()) == []


def test_no_command_makes_the_database_folder(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "dir"
    line = error_line(cli("bot", "add", "x", "--db", str(missing / "x.db")))
    assert line == (
        f"error: no folder {missing} for the database {missing / 'x.db'}; create it first "
        f"(mkdir -p {missing}) or give --db another file"
    )
    assert not (tmp_path / "missing").exists()
    line = error_line(cli("bot", "add", "x", "--db", f"sqlite:///{missing / 'x.db'}"))
    assert f"no folder {missing}" in line and not (tmp_path / "missing").exists()


def test_bot_update_changes_the_command_keeps_the_token_and_names_the_database(
    tmp_path: Path,
) -> None:
    added = cli("bot", "add", "m", "--command", "false", "--db", "w.db", "--json", cwd=tmp_path)
    token = json.loads(added.stdout)["token"]
    updated = cli("bot", "update", "m", "--command", RANDOM, "--db", "w.db", cwd=tmp_path)
    assert updated.returncode == 0, updated.stderr
    assert updated.stdout.splitlines() == [
        "bot m updated (id 1), stored in w.db",
        f"command: {RANDOM}",
    ]
    code = tmp_path / "code"
    code.mkdir()
    (code / "bot.py").write_text("print('hi')\n")
    updated = cli("bot", "update", "m", "--dir", str(code), "--db", "w.db", cwd=tmp_path)
    assert updated.returncode == 0, updated.stderr
    first, second = updated.stdout.splitlines()
    assert first == "bot m updated (id 1), stored in w.db"
    assert second.startswith(f"code: {code} stored, 1 files, ")
    with Store(f"sqlite:///{tmp_path / 'w.db'}") as store:
        bot = store.find_bot_by_token(token)
        assert bot is not None and bot.command == RANDOM and bot.code_digest is not None
    nothing = error_line(cli("bot", "update", "m", "--db", "w.db", cwd=tmp_path))
    assert "give --command, --dir or both" in nothing


def kit_lines(out: str) -> dict[str, str]:
    """`  KIT: COMMAND` lines of `bot add` by kit."""
    found = {}
    for line in out.splitlines():
        kit, sep, command = line.strip().partition(": ")
        if line.startswith("  ") and sep and kit in KITS:
            found[kit] = command
    return found


def test_bot_add_of_a_remote_bot_prints_a_command_per_kit_and_the_python_one_plays(
    tmp_path: Path,
) -> None:
    added = cli("bot", "add", "remote1", "--db", "r.db", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    lines = added.stdout.splitlines()
    assert lines[0] == "bot remote1 registered (id 1), stored in r.db"
    token = lines[1].removeprefix("token: ")
    commands = kit_lines(added.stdout)
    assert sorted(commands) == sorted(KITS)
    for command in commands.values():
        words = shlex.split(command)
        assert words[words.index("--server") + 1] == "127.0.0.1:50051"
        assert words[words.index("--token") + 1] == token
    assert shlex.split(commands["Python"])[:2] == [sys.executable, str(EXAMPLES / "random_bot.py")]

    # The printed Python command plays a bot test, on the address the test prints.
    test = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "bot", "test", "remote1", "--game", "knaves",
         "--matches", "1", "--port", "0", "--sandbox", "none", "--db", "r.db"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    bot = None
    try:
        assert test.stdout is not None
        waiting = [test.stdout.readline(), test.stdout.readline()][1]
        address = re.search(r"connect to (\S+) ", waiting)
        assert address is not None, waiting
        words = shlex.split(commands["Python"])
        words[words.index("--server") + 1] = address[1]
        bot = subprocess.Popen(words, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out, err = test.communicate(timeout=120)
        assert bot.wait(60) == 0
    finally:
        test.kill()
        if bot is not None:
            bot.kill()
    assert test.returncode == 0, out + err
    assert out.splitlines()[-1].startswith("PASS: 1 match, 0 faults")


def test_a_failing_bot_test_names_the_stderr_log_and_the_log_folder_it_made(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    command = shlex.join([sys.executable, str(ONE_ILLEGAL), str(tmp_path / "request.hex"), "4"])
    assert cli("bot", "add", "sloppy", "--command", command, "--db", db).returncode == 0
    logs = tmp_path / "fresh" / "logs"
    run = cli(
        "bot", "test", "sloppy", "--game", "knaves", "--seed", "11", "--sandbox", "none",
        "--log-dir", str(logs), "--db", db,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    log = logs / "bot-test" / "sloppy.stderr.log"
    assert run.stdout.splitlines()[-2:] == [
        f"sloppy's stderr: {log}",
        "FAIL: 1 fault (illegal_action 1) in 3 matches",
    ]
    assert log.is_file()
    made = f"created directory {logs} for the bots' stderr logs (or name another with --log-dir)"
    assert made in run.stderr.splitlines()
    again = cli(
        "bot", "test", "sloppy", "--game", "knaves", "--seed", "11", "--sandbox", "none",
        "--log-dir", str(logs), "--db", db, "--json",
    )  # fmt: skip
    assert json.loads(again.stdout)["stderr_log"] == str(log)
    assert "created directory" not in again.stderr  # it is there now


def test_a_port_in_use_names_the_port_and_the_option_that_changes_it(
    tmp_path: Path, held_port: int
) -> None:
    db = str(tmp_path / "cs.db")
    in_use = f"port {held_port} is in use"
    web = error_line(cli("serve", "--port", "0", "--web-port", str(held_port), "--db", db))
    assert in_use in web and "--web-port PORT (0: no web page)" in web, web
    assert "any free port" not in web
    bots = error_line(cli("serve", "--port", str(held_port), "--web-port", "0", "--db", db))
    assert in_use in bots and "--port PORT (0: any free port)" in bots, bots

    assert cli("bot", "add", "remote1", "--db", db).returncode == 0
    tested = error_line(cli("bot", "test", "remote1", "--game", "knaves", "--port",
                            str(held_port), "--sandbox", "none", "--db", db))  # fmt: skip
    assert in_use in tested and "--port PORT" in tested and "--server HOST:PORT" in tested
    run = error_line(
        cli("tournament", "run", "knaves", "--bots",
            "remote1,house:knaves:noise=0,house:knaves:noise=1", "--port", str(held_port),
            "--sandbox", "none", "--db", db)
    )  # fmt: skip
    assert in_use in run and "for remote bots" in run and "--port PORT" in run, run
    with Store(f"sqlite:///{db}") as store:
        assert store.list_tournaments() == []  # refused before anything was stored
