"""No bot process outlives the server that started it: after a match, Ctrl-C, or kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.serve_bots import SLEEPER

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def start(mode: str, *extra: str) -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.server.serve_bots", "3", mode, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    pids = []
    for line in proc.stdout:
        if line.strip() == "ready":
            break
        pids.append(int(line))
    assert len(pids) == 3
    assert all(alive(p) for p in pids)
    return proc, pids


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def test_no_orphans_after_a_match() -> None:
    proc, pids = start("play")
    out, _ = proc.communicate(timeout=120)
    assert "finished" in out
    assert proc.returncode == 0
    assert wait_gone(pids) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_no_orphans_after_the_server_is_stopped(sig: signal.Signals) -> None:
    proc, pids = start("wait")  # "ready": the bots have connected
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    try:
        assert wait_gone(pids) == [], "bot processes outlived the server"
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def sleepers() -> list[int]:
    """Host pids of the setsid children the sandboxed bots started."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline == f"sleep\0{SLEEPER}\0".encode() and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def wait_for(predicate: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_sandboxed_bots_and_their_setsid_children_die_with_the_server(
    sig: signal.Signals,
) -> None:
    proc, pids = start("wait", "sandbox")
    try:
        # Each bot's setsid sleeper runs before the bot connects: wait until all three do.
        assert wait_for(lambda: len(sleepers()) == 3), sleepers()
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert wait_gone(pids) == [], "sandbox launchers outlived the server"
        assert wait_for(lambda: sleepers() == []), f"setsid children left: {sleepers()}"
    finally:
        for pid in [*pids, *sleepers()]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
