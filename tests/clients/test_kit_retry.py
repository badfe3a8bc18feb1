"""Every kit started before the server says so in one line while it retries, then plays once
the server is up (issue 31, item 1): the bot is started first, its retry line is waited for on
its stderr, and only then is the server (a `bot test` of the remote bot) started."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.kits import KITS, ROOT, kit_commands

RETRY_S = 30  # every kit's default: give up when the server is gone this long


def cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("kit", KITS)
def test_a_kit_started_before_the_server_says_so_once_then_plays(kit: str, tmp_path: Path) -> None:
    command = kit_commands()[kit]
    db = str(tmp_path / "cs.db")
    added = cli("bot", "add", "early", "--db", db, "--json", cwd=tmp_path)
    out, err = added.communicate(timeout=60)
    assert added.returncode == 0, err
    server = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "CARDSHARK_SERVER": server, "CARDSHARK_TOKEN": json.loads(out)["token"]}
    bot = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    test = None
    try:
        assert bot.stderr is not None
        first = bot.stderr.readline()  # the server is not up: the kit retries
        assert first.rstrip("\n") == (
            f"cardshark: cannot reach {server} (connection refused); retrying for up to {RETRY_S} s"
        ), first + bot.stderr.read()
        test = cli(
            "bot", "test", "early", "--game", "knaves", "--matches", "1", "--port",
            server.rsplit(":", 1)[1], "--sandbox", "none", "--db", db, cwd=tmp_path,
        )  # fmt: skip
        out, err = test.communicate(timeout=120)
        rest = bot.communicate(timeout=60)[1]
    finally:
        for proc in (bot, test):
            if proc is not None:
                proc.kill()
                proc.wait()
    assert test.returncode == 0, out + err + rest
    assert out.splitlines()[-1].startswith("PASS: 1 match, 0 faults"), out
    said = (first + rest).splitlines()
    assert [line for line in said if "cannot reach" in line] == [first.rstrip("\n")], said
    assert bot.returncode == 0, said  # the test's end is a Goodbye
