"""The command line never surprises: bad values are one line and exit 2 with nothing stored,
read-only commands never create a database, help names values instead of types, progress
goes to logs as plain lines, and Ctrl-C or SIGTERM leave a resumable tournament."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{shlex.quote(sys.executable)} {ROOT / 'clients/python/examples/knaves_bot.py'}"
RANDOM = f"{shlex.quote(sys.executable)} {ROOT / 'clients/python/examples/random_bot.py'}"


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | (env or {}),
    )


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    return lines[0]


@pytest.fixture
def with_bots(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'bots.db'}"
    for name in ("a", "b", "c"):
        assert (
            cli("bot", "add", name, "--command", EXAMPLE, "--db", db, cwd=tmp_path).returncode == 0
        )
    return db


BAD_VALUES = {
    "port": (["--port", "99999"], "'--port': 99999 is not a port; allowed: 0 to 65535"),
    "negative port": (["--port", "-1"], "'--port': -1 is not a port; allowed: 0 to 65535"),
    "host": (["--host", "8.8.8.8"], "cannot listen on --host '8.8.8.8': Cannot assign"),
    "unknown host": (["--host", "no.such.host.invalid"], "cannot listen on --host 'no.such"),
    "clock": (["--clock", "sundial"], "unknown --clock 'sundial'; allowed: cpu, wall"),
    "sandbox": (["--sandbox", "chroot"], "chroot"),
}


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_a_bad_value_is_one_line_and_creates_no_database(tmp_path: Path, case: str) -> None:
    args, expected = BAD_VALUES[case]
    db = tmp_path / "fresh.db"
    run = cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        "a,b,c",
        *args,
        "--db",
        f"sqlite:///{db}",
        cwd=tmp_path,
    )
    assert expected in one_error_line(run)
    assert not db.exists() and not (tmp_path / "cardshark.db").exists()


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("foo=1", "unknown option 'foo' for knaves: it has no options"),
        (
            "nonsense",
            "bad --option 'nonsense'; expected NAME=VALUE "
            "(`cardshark games` lists each game's options)",
        ),
    ],
)
def test_a_bad_game_option_is_named_and_nothing_is_stored(
    tmp_path: Path, with_bots: str, option: str, expected: str
) -> None:
    run = cli(
        "tournament",
        "run",
        "knaves",
        "--bots",
        "a,b,c",
        "--option",
        option,
        "--db",
        with_bots,
        cwd=tmp_path,
    )
    assert one_error_line(run) == f"error: {expected}"
    with Store(with_bots) as store:
        assert store.list_tournaments() == []


def test_an_unknown_option_of_a_game_with_options_lists_them(
    tmp_path: Path, with_bots: str
) -> None:
    run = cli(
        "tournament",
        "run",
        "kansas-city",
        "--bots",
        "a,b,c,a",
        "--option",
        "hand=2",
        "--db",
        with_bots,
        cwd=tmp_path,
    )
    line = one_error_line(run)
    assert line.startswith("error: unknown option 'hand' for kansas-city; its options: ")
    assert "hands (integers 1..20; default 3)" in line and "numbers_public (" in line


READ_ONLY = [
    ["rankings", "knaves"],
    ["bot", "list"],
    ["author", "list"],
    ["author", "disable", "ann"],
    ["tournament", "list"],
    ["tournament", "status", "1"],
    ["match", "show", "1"],
    ["ratings", "recompute", "knaves"],
]


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_read_only_commands_never_create_a_database(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "sub" / "cardshrak.db"
    line = one_error_line(cli(*command, "--db", f"sqlite:///{typo}", cwd=tmp_path))
    assert line.startswith(f"error: no database at {typo} (from --db)")
    assert not typo.parent.exists()
    default = one_error_line(cli(*command, cwd=tmp_path, env={"CARDSHARK_DB": ""}))
    assert f"no database at {tmp_path / 'cardshark.db'}" in default
    assert "sqlite:///./cardshark.db" in default  # the default location is named
    assert list(tmp_path.iterdir()) == []


def test_postgres_without_psycopg_says_which_extra_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg2'] = None\n"
        "sys.argv = ['cardshark', 'bot', 'add', 'x', '--db', 'postgresql://u@127.0.0.1:1/db']\n"
        "from server.cli import main; main()"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    line = one_error_line(run)
    assert "PostgreSQL needs psycopg: pip install 'cardshark[postgres]'" in line


def command_paths() -> list[list[str]]:
    from server.cli import command

    paths: list[list[str]] = []

    def walk(node: object, path: list[str]) -> None:
        paths.append(path)
        for name, child in getattr(node, "commands", {}).items():
            walk(child, [*path, name])

    walk(command(), [])
    return paths


def test_help_of_every_command_names_values_never_types(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # In process: what is checked is the command tree's help text, not the start-up (the other
    # tests here run the command as a process); a process per command cost 20 s.
    from server.cli import command

    monkeypatch.setenv("COLUMNS", "80")  # as in a process without a terminal
    root = command()

    def help_of(path: list[str]) -> str:
        capsys.readouterr()
        status = root.main([*path, "--help"], prog_name="cardshark", standalone_mode=False)
        assert status in (0, None), path
        return capsys.readouterr().out

    paths = command_paths()
    assert ["tournament", "run"] in paths and ["bot", "add"] in paths
    for path in paths:
        if path == ["bridge"]:
            continue  # the bridge parses its own arguments (its own test checks its help)
        out = help_of(path)
        assert out.startswith(f"Usage: cardshark {' '.join(path)}".rstrip()), (path, out)
        assert not re.search(r"<(int|str|bool|float|path|text)[^>]*>", out, re.I), (path, out)
    out = help_of(["tournament", "run"])
    assert "--port PORT" in out and "--allow-absent " in out


def test_output_to_files_has_progress_lines_and_uncut_tables(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 't.db'}"
    names = ["a-bot-whose-name-is-long-enough-to-overflow-eighty-columns-" + c for c in "xyz"]
    for name in names:
        assert (
            cli("bot", "add", name, "--command", EXAMPLE, "--db", db, cwd=tmp_path).returncode == 0
        )
    with (tmp_path / "out").open("w") as out, (tmp_path / "err").open("w") as err:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "server.cli",
                "tournament",
                "run",
                "knaves",
                "--bots",
                ",".join(names),
                "--rounds",
                "3",
                "--sandbox",
                "none",
                "--db",
                db,
            ],
            cwd=tmp_path,
            stdout=out,
            stderr=err,
            timeout=300,
        )
    assert run.returncode == 0
    err_text = (tmp_path / "err").read_text()
    progress = [line for line in err_text.splitlines() if line.startswith("tournament 1: ")]
    done = [
        int(re.match(r"tournament 1: (\d+)/18 matches", line).group(1))  # type: ignore[union-attr]
        for line in progress
    ]
    assert done and done[-1] == 18 and done == sorted(done) and len(done) >= 3
    out_text = (tmp_path / "out").read_text()
    rows = [line for line in out_text.splitlines() if any(n in line for n in names)]
    assert len(rows) == 3  # each name whole, on one row with its figures
    # the tournament's standings, every column: #, bot, matches, total, mean, three places,
    # faults, forfeits, μ, σ and P(above next)
    assert all(line.rstrip().endswith("│") and line.count("│") == 14 for line in rows)


def slow_field(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 't.db'}"
    for name in ("a", "b", "c", "d"):
        assert (
            cli("bot", "add", name, "--command", RANDOM, "--db", db, cwd=tmp_path).returncode == 0
        )
    return db


@pytest.mark.parametrize(
    ("sent", "status", "named"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_an_interrupted_tournament_says_how_to_resume_and_resume_finishes_it(
    tmp_path: Path, sent: signal.Signals, status: int, named: str
) -> None:
    db = slow_field(tmp_path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "tournament",
            "run",
            "knaves",
            "--bots",
            "a,b,c,d",
            "--rounds",
            "10",
            "--concurrency",
            "1",
            "--sandbox",
            "none",
            "--db",
            db,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # the first progress line: matches are being played
        if line.startswith("tournament 1: "):
            break
    proc.send_signal(sent)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, out + err
    assert f"interrupted by {named}: tournament 1 has " in err
    assert "cardshark tournament resume 1" in err
    assert "Traceback" not in out + err and "CancelledError" not in out + err
    with Store(db) as store:
        progress = store.tournament_status(1)
        assert progress.tournament.status == "interrupted"
        assert 1 <= progress.finished < progress.scheduled == 240
    resumed = cli("tournament", "resume", "1", "--sandbox", "none", "--db", db, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with Store(db) as store:
        progress = store.tournament_status(1)
        assert progress.tournament.status == "finished" and progress.finished == 240
