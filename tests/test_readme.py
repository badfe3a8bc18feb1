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
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "CARDSHARK_DB": f"sqlite:///{tmp_path / 'readme.db'}",
    }
    for line in runnable_lines(README.read_text()):
        run = subprocess.run(
            ["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, f"README line failed: {line}\n{run.stdout}\n{run.stderr}"
        assert "Traceback" not in run.stdout + run.stderr, line
