"""`cardshark author add|list|disable` as processes: the key printed once and stored only
hashed, bad, duplicate and unknown names refused in one line, a disabled author's bot refused
by a new tournament in one line, and bot list and bot show naming each bot's author.

Commands that do not depend on each other run at once, and what the listings print is read
in this process: each process costs about a second of start-up."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.models import HOUSE_AUTHOR
from tournaments.store import Store, hash_token

ROOT = Path(__file__).resolve().parents[2]


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )


def run_all(*commands: list[str], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Run every command at once; their results in the same order."""
    procs = [start(*command, cwd=cwd) for command in commands]
    done = []
    for command, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert run.stdout == "" and "Traceback" not in run.stderr
    return lines[0]


def database_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_authors_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cs.db"
    db = f"sqlite:///{path}"
    added, bad = run_all(
        ["author", "add", "ann", "--db", db],
        ["author", "add", "bad name", "--db", f"sqlite:///{tmp_path / 'bad.db'}"],
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    keys = re.findall(r"^key: ([0-9a-f]{64})$", added.stdout, re.M)
    assert len(keys) == 1 and added.stdout.count(keys[0]) == 1  # printed once
    assert "shown only once" in added.stdout
    key = keys[0]
    held = database_bytes(path)
    assert hash_token(key).encode() in held and key.encode() not in held  # stored hashed only
    assert one_error_line(bad) == (
        "error: author name 'bad name' must be 1-64 letters, digits, '_', '.' or '-', "
        "starting with a letter or digit"
    )
    assert not (tmp_path / "bad.db").exists()  # a refused name makes no database

    with Store(db) as store:
        store.add_bot("a1", "python3 a1.py", author="ann")
        for name in ("h1", "h2"):
            store.add_bot(name, f"python3 {name}.py")
        assert store.author_for_key(key) is not None

    duplicate, unknown, disabled = run_all(
        ["author", "add", "ann", "--db", db],
        ["author", "disable", "zed", "--db", db],
        ["author", "disable", "ann", "--db", db],
        cwd=tmp_path,
    )
    assert one_error_line(duplicate) == "error: author name 'ann' is already taken"
    assert one_error_line(unknown) == "error: no author 'zed'; registered authors: ann, house"
    assert disabled.returncode == 0, disabled.stderr
    assert disabled.stdout.startswith("author ann disabled: their key is refused; their bots (a1)")

    (refused,) = run_all(
        ["tournament", "create", "knaves", "--bots", "h1,h2,a1", "--db", db], cwd=tmp_path
    )
    assert one_error_line(refused) == (
        "error: bot 'a1' cannot enter a new tournament: its author 'ann' is disabled"
    )
    with Store(db) as store:
        assert store.author_for_key(key) is None  # disabled: the key is refused
        assert store.list_tournaments() == []  # nothing stored by the refused tournament

    # What the listings say, in this process (the start-up and errors were tried above).
    listed = json.loads(in_process(capsys, "author", "list", "--json", "--db", db))
    assert [(a["name"], a["bots"], a["disabled"]) for a in listed] == [
        ("ann", ["a1"], True),
        (HOUSE_AUTHOR, ["h1", "h2"], False),
    ]
    bots = json.loads(in_process(capsys, "bot", "list", "--json", "--db", db))
    assert {b["name"]: b["author"] for b in bots} == {
        "a1": "ann",
        "h1": HOUSE_AUTHOR,
        "h2": HOUSE_AUTHOR,
    }
    table = in_process(capsys, "bot", "list", "--db", db)
    assert re.search(r"│ a1 +│ ann +│", table), table
    shown = in_process(capsys, "bot", "show", "a1", "--db", db)
    assert shown.startswith("bot a1 (id 1), managed, by ann, registered "), shown
    authors = in_process(capsys, "author", "list", "--db", db)
    assert re.search(r"│ ann +│ +1 │ yes +│", authors), authors


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The output of a cardshark command run in this process (as the help test does)."""
    from server.cli import command

    capsys.readouterr()
    status = command().main(list(args), prog_name="cardshark", standalone_mode=False)
    assert status in (0, None), args
    return capsys.readouterr().out
