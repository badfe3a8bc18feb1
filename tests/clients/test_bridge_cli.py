"""`cardshark bridge` names itself so in its help and errors; the module names itself too."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_cardshark_bridge_help_names_the_cardshark_command() -> None:
    done = run("-m", "server.cli", "bridge", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: cardshark bridge [--server HOST:PORT]"), done.stdout
    assert "cardshark_bot" not in done.stdout, done.stdout


def test_cardshark_bridge_errors_name_the_cardshark_command() -> None:
    done = run("-m", "server.cli", "bridge", "--token", "t")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("cardshark bridge: error: no bot command")


def test_the_bridge_module_names_itself() -> None:
    done = run("-m", "cardshark_bot.bridge", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m cardshark_bot.bridge "), done.stdout
