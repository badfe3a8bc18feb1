"""The kits run inside the default sandbox: a Node bot, started by the server under bwrap,
reads what its kit needs (the .proto files, its modules) and plays with no faults, over
either transport (the local one has no referee socket in the sandbox at all)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.play.arena import TRANSPORTS

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", f"sqlite:///{cwd / 'k.db'}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_node_kit_plays_inside_the_sandbox(tmp_path: Path, transport: str) -> None:
    node = shutil.which("node")
    assert node is not None, "node is installed by .ci/run"
    bot = f"{node} {ROOT / 'clients/node/examples/random_bot.js'}"
    assert cli("bot", "add", "nodebot", "--command", bot, cwd=tmp_path).returncode == 0
    run = cli(
        "bot",
        "test",
        "nodebot",
        "--game",
        "knaves",
        "--matches",
        "2",
        "--sandbox",
        "bwrap",
        "--seed",
        "5",
        "--transport",
        transport,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS: 2 matches, 0 faults" in run.stdout
