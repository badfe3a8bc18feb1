"""The README's examples run as written: every line of a ```sh runnable block, in order,
against a fresh database, from the repository (as a reader would type them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def runnable_lines(text: str) -> list[str]:
    """The commands of every block fenced as ```sh runnable, comments dropped."""
    lines: list[str] = []
    for block in re.findall(r"^```sh runnable\n(.*?)^```", text, re.S | re.M):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def test_the_readme_has_runnable_examples_of_every_command_group() -> None:
    lines = runnable_lines(README.read_text())
    for group in (
        "games",
        "bot add",
        "bot test",
        "tournament run",
        "rankings",
        "tournament show",
        "match list",
        "match show",
        "bot show",
    ):
        assert any(line.startswith(f"cardshark {group}") for line in lines), group


def test_every_runnable_readme_command_runs_as_written(tmp_path: Path) -> None:
    """After the demo (the README's first command), as a reader runs them: every line works,
    and the ids it names are those of the tournament its own `tournament run` printed."""
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "CARDSHARK_DB": f"sqlite:///{tmp_path / 'readme.db'}",
    }
    lines = runnable_lines(README.read_text())
    out: dict[str, str] = {}
    for line in ["cardshark demo", *lines]:
        run = subprocess.run(
            ["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, f"README line failed: {line}\n{run.stdout}\n{run.stderr}"
        assert "Traceback" not in run.stdout + run.stderr, line
        out[line] = run.stdout
    played = next(line for line in lines if line.startswith("cardshark tournament run"))
    printed = re.search(r"^tournament (\d+): .*, match ids (\d+)–(\d+)$", out[played], re.M)
    assert printed, out[played]
    tournament, first, last = (int(n) for n in printed.groups())
    assert tournament == 2  # the demo's is 1
    for line in lines:
        for named in re.findall(r"(?:tournament \w+|--tournament) (\d+)", line):
            assert int(named) == tournament, line
        for named in re.findall(r"match (?:show|replay) (\d+)", line):
            assert first <= int(named) <= last, line
        if line.startswith(("cardshark match show", "cardshark match replay")):
            assert f"match {first}" in out[line], out[line]
        if line.startswith("cardshark match show"):
            assert f"of tournament {tournament}:" in out[line].splitlines()[0]
        if line.startswith("cardshark tournament show"):
            assert out[line].startswith(f"tournament {tournament}:"), out[line]
        if line.startswith("cardshark match list"):
            assert out[line].startswith(f"tournament {tournament} "), out[line]
