"""Managed bots that cannot start stop a tournament before its first match, in one message;
with --allow-absent they forfeit at once; one that dies mid-run is a no-show at once."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from server.bots.sandbox import SandboxError
from server.play.arena import Arena
from server.play.preflight import BotsDidNotStart
from server.play.tournament import run_tournament
from tournaments.models import MatchStatus
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{shlex.quote(sys.executable)} {ROOT / 'clients/python/examples/knaves_bot.py'}"
HOSTILE = f"{shlex.quote(sys.executable)} {ROOT / 'tests/server/bots/hostile.py'}"
CONNECT_TIMEOUT_S = 10.0  # ClockSettings.no_show_s, the connect timeout of the preflight


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args, "--db", f"sqlite:///{tmp_path / 't.db'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def add_bots(tmp_path: Path, bots: dict[str, str]) -> None:
    for name, command in bots.items():
        assert cli(tmp_path, "bot", "add", name, "--command", command).returncode == 0


def counts(tmp_path: Path) -> tuple[int, int, int]:
    """(finished matches, seat results, rated bots) in the database."""
    with Store(f"sqlite:///{tmp_path / 't.db'}") as store:
        matches = [m for t in store.list_tournaments() if t.id for m in store.matches(t.id)]
        finished = [m for m in matches if m.status == MatchStatus.FINISHED.value]
        seats = sum(len(store.seat_results(m.id)) for m in finished if m.id)
        return len(finished), seats, len(store.ratings("knaves"))


BROKEN = {
    "false": ("false", "exited with status 1 before saying Hello", None),
    "missing": (
        "/nonexistent/dir/bot",
        "exited with status 127 before saying Hello",
        "/nonexistent/dir/bot",
    ),
    "late": (
        "sh -c 'echo warming up >&2; sleep 1; echo giving up >&2; exit 3'",
        "exited with status 3 before saying Hello",
        "giving up",
    ),
}


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_bot_that_cannot_start_stops_the_run_before_anything_is_played(
    tmp_path: Path, broken: str, sandbox: str
) -> None:
    command, reason, stderr_line = BROKEN[broken]
    add_bots(tmp_path, {"a": EXAMPLE, "b": EXAMPLE, broken: command})
    began = time.monotonic()
    run = cli(
        tmp_path, "tournament", "run", "knaves", "--bots", f"a,b,{broken}", "--sandbox", sandbox
    )
    took = time.monotonic() - began
    assert run.returncode == 2, run.stdout + run.stderr
    assert took < CONNECT_TIMEOUT_S, f"waited {took:.1f} s for a bot that had exited"
    err = run.stderr
    assert "tournament 1 did not start: nothing was played or rated" in err
    assert f"bot {broken!r} {reason}" in err
    assert f"log: logs/tournament-1/{broken}.stderr.log" in err
    if stderr_line is not None:
        assert f"| {stderr_line}" in err or stderr_line in err.split("last lines")[1]
    assert "cardshark tournament resume 1" in err and "--allow-absent" in err
    assert "Traceback" not in err
    assert "bot 'a'" not in err and "bot 'b'" not in err  # only the broken one is named
    assert counts(tmp_path) == (0, 0, 0)


def test_with_allow_absent_the_broken_bot_forfeits_every_match_at_once(tmp_path: Path) -> None:
    add_bots(tmp_path, {"a": EXAMPLE, "b": EXAMPLE, "c": EXAMPLE, "false": "false"})
    run = cli(
        tmp_path,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "a,b,c,false",
        "--allow-absent",
        "--sandbox",
        "none",
        "--seed",
        "7",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning: bot")]
    assert warnings == [
        "warning: bot 'false' is not playing: exited with status 1 before saying Hello; "
        "a no-show in its remaining matches; log: logs/tournament-1/false.stderr.log"
    ]
    with Store(f"sqlite:///{tmp_path / 't.db'}") as store:
        absent = store.get_bot("false").id
        matches = [m for m in store.matches(1) if m.status == MatchStatus.FINISHED.value]
        assert len(matches) == 24
        sat = [m for m in matches if absent in m.seats]
        assert len(sat) == 18
        for match in sat:  # none waited out the connect timeout for the bot that had exited
            assert match.started is not None and match.finished is not None
            assert (match.finished - match.started).total_seconds() < CONNECT_TIMEOUT_S / 2
            seat = match.seats.index(absent)
            record = match.record or {}
            faults = [f for f in record["faults"] if f["seat"] == seat]
            assert [f["kind"] for f in faults] == ["no_show"]
            assert "exited with status 1 before saying Hello" in faults[0]["detail"]
            assert record["forfeited"][seat] is True
        others = [m for m in matches if absent not in m.seats]
        assert all(not (m.record or {})["faults"] for m in others)


def test_a_bot_that_dies_mid_run_is_a_no_show_at_once_with_one_warning(tmp_path: Path) -> None:
    add_bots(tmp_path, {"a": EXAMPLE, "b": EXAMPLE, "c": EXAMPLE, "dies": f"{HOSTILE} crash 1"})
    run = cli(
        tmp_path,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "a,b,c,dies",
        "--concurrency",
        "1",
        "--sandbox",
        "none",
        "--seed",
        "3",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning: bot")]
    assert len(warnings) == 1, run.stderr
    assert warnings[0].startswith("warning: bot 'dies' is not playing: exited with status")
    assert warnings[0].endswith("log: logs/tournament-1/dies.stderr.log")
    with Store(f"sqlite:///{tmp_path / 't.db'}") as store:
        dead = store.get_bot("dies").id
        sat = [m for m in store.matches(1) if dead in m.seats and m.status == "finished"]
        kinds = []
        for match in sorted(sat, key=lambda m: m.schedule_index):
            seat = match.seats.index(dead)
            kinds.append([f["kind"] for f in (match.record or {})["faults"] if f["seat"] == seat])
        assert kinds[0] == ["disconnected"]  # it crashed on its first request
        assert all(k == ["no_show"] for k in kinds[1:]) and len(kinds) == 18
        detail = next(
            f["detail"] for f in (sat[-1].record or {})["faults"] if f["kind"] == "no_show"
        )
        assert "is not running: it exited with status" in detail


def test_a_bot_the_server_could_not_start_voids_the_run_even_with_allow_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox failing is the server's fault: nothing is played, nobody forfeits."""
    store = Store(f"sqlite:///{tmp_path / 't.db'}")
    for name in ("a", "b", "c"):
        store.add_bot(name, EXAMPLE)
    tournament = store.create_tournament("knaves", ["a", "b", "c"], seed=1)
    assert tournament.id is not None
    real_spawn = Arena.spawn

    async def failing_spawn(
        self: Arena, name: str, command: str, token: str, *more: Any, **named: Any
    ) -> Any:
        if name == "c":
            raise SandboxError("cannot create the cgroup /sys/fs/cgroup/pids/cardshark/x")
        return await real_spawn(self, name, command, token, *more, **named)

    monkeypatch.setattr(Arena, "spawn", failing_spawn)
    with pytest.raises(BotsDidNotStart) as caught:
        asyncio.run(run_tournament(store, tournament.id, allow_absent=True, log_dir=tmp_path))
    (failure,) = caught.value.failures
    assert failure.name == "c" and failure.server_fault
    assert "could not be started by the server: cannot create the cgroup" in str(caught.value)
    assert "the server's fault" in str(caught.value)
    assert [m.status for m in store.matches(tournament.id)] == ["pending"] * 6
    assert store.ratings("knaves") == {}
    store.close()
