"""Helpers for the web page's browser tests: a real `cardshark serve`, Chromium, stored matches."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from games.registry import get_game
from tournaments.ratings import SeatOutcome
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_web(db: str) -> Iterator[str]:
    """`cardshark serve` over the database URL; yields the web page's base URL."""
    with serve_web_and_admin(db) as (url, _):
        yield url


@contextmanager
def serve_web_and_admin(
    db: str, admin_token: str | None = None, log_dir: Path | None = None
) -> Iterator[tuple[str, str]]:
    """`cardshark serve` over the database URL (its Admin service on with admin_token, managed
    bots' stderr in log_dir); yields the web page's base URL and the gRPC address."""
    web, port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k != "CARDSHARK_ADMIN_TOKEN"}
    if admin_token is not None:
        env["CARDSHARK_ADMIN_TOKEN"] = admin_token
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            str(port),
            "--web-port",
            str(web),
            "--db",
            db,
            *(["--log-dir", str(log_dir)] if log_dir else []),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{web}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the web page did not come up"
            time.sleep(0.2)  # polling for the port, not synchronising with the page
    try:
        yield url, f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def chromium_page() -> Iterator[Page]:
    """A page of Debian's Chromium driven by Playwright."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(chromium).exists(), "Chromium is missing: apt-get install chromium (.ci/run does)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield browser.new_page()
        browser.close()


def play_match(
    store: Store,
    match_id: int,
    *,
    faults: list[dict[str, Any]] | None = None,
    forfeit: int | None = None,
) -> dict[str, Any]:
    """Play a stored pending match in process with seeded random legal actions and record it
    (as the referee would: record, scores, faults per seat, a forfeited seat); returns the
    record."""
    detail = store.match_detail(match_id)
    match, tournament = detail.match, detail.tournament
    game = get_game(tournament.game)
    state = game.new_match(match.seed, len(match.seats), tournament.options)
    rng = random.Random(match_id)  # rotations share their deal, not their play
    move_ms = []
    while game.to_act(state) is not None:
        game.apply(state, rng.choice(game.legal_actions(state)))
        move_ms.append(round(rng.uniform(0.1, 50.0), 1))
    result = game.result(state)
    faults = faults or []
    record = {
        "match_id": str(match_id),
        "game": game.spec.name,
        "options": dict(state.options),
        "seed": match.seed,
        "seats": [str(b) for b in match.seats],
        "actions": list(state.history),
        "move_ms": move_ms,
        "faults": faults,
        "scores": list(result.scores),
        "ranks": list(result.ranks),
        "forfeited": [s == forfeit for s in range(len(match.seats))],
        "status": "finished",
        "reason": "",
    }
    per_seat = [sum(1 for f in faults if f["seat"] == s) for s in range(len(match.seats))]
    store.start_match(match_id)
    store.record_result(
        match_id,
        [
            SeatOutcome(float(sc), n, s == forfeit)
            for s, (sc, n) in enumerate(zip(result.scores, per_seat, strict=True))
        ],
        record=record,
    )
    return record
