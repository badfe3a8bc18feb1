"""`cardshark games`: the games, and with --verbose one line on how the engines run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def games(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "games", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "CARDSHARK_PURE_PYTHON"} | (env or {}),
    )


def test_verbose_says_in_one_line_whether_the_engines_are_compiled() -> None:
    run = games("--verbose")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "knaves" in run.stdout
    assert [line for line in lines if line.startswith("engines:")] == [lines[-1]]
    assert re.fullmatch(r"engines: (compiled \(mypyc \d[\w.+]*\)|pure Python \(.+\))", lines[-1])
    if os.environ.get("CARDSHARK_EXPECT_COMPILED"):
        assert lines[-1].startswith("engines: compiled (mypyc ")
    assert "engines:" not in games().stdout  # only when asked


def test_verbose_names_why_the_engines_are_pure_python() -> None:
    run = games("-v", env={"CARDSHARK_PURE_PYTHON": "1"})
    assert run.stdout.splitlines()[-1] == "engines: pure Python (CARDSHARK_PURE_PYTHON is set)"


def test_with_json_the_line_goes_to_stderr_and_stdout_stays_json() -> None:
    run = games("--json", "--verbose")
    assert [row["name"] for row in json.loads(run.stdout)][:1] == ["kansas-city"]
    assert run.stderr.startswith("engines: ")
