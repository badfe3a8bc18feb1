"""`cardshark serve` stops in order on Ctrl-C and SIGTERM: no traceback, exit 0, and a
tournament it was running for the Admin service is left interrupted, with its resume line."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import grpc
import pytest

from cardshark.v1 import admin_pb2 as pb
from cardshark.v1 import admin_pb2_grpc
from tests.server.test_admin import AUTH, EXAMPLES, TOKEN, free_port, start_serve
from tournaments.store import Store


@pytest.mark.parametrize(
    ("sent", "named"), [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")]
)
def test_serve_stops_cleanly_with_its_web_page(
    tmp_path: Path, sent: signal.Signals, named: str
) -> None:
    web_port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            str(free_port()),
            "--web-port",
            str(web_port),
            "--db",
            f"sqlite:///{tmp_path / 'cs.db'}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("web page on"):
            break
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=30) as page:
        assert page.status == 200
    proc.send_signal(sent)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"stopped ({named})" in out
    assert "Traceback" not in err and "CancelledError" not in err, err


def test_sigterm_leaves_an_admin_tournament_interrupted_and_resumable(tmp_path: Path) -> None:
    proc, address = start_serve(tmp_path, env={"CARDSHARK_ADMIN_TOKEN": TOKEN})
    updates: list[pb.TournamentProgress] = []
    first = threading.Event()
    with grpc.insecure_channel(address) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        names = []
        for i in range(3):
            command = f"{sys.executable} {EXAMPLES / 'random_bot.py'}"
            admin.AddBot(pb.AddBotRequest(name=f"b{i}", command=command), metadata=AUTH)
            names.append(f"b{i}")
        created = admin.CreateTournament(
            pb.CreateTournamentRequest(game="knaves", bots=names, rounds=30, seed=3), metadata=AUTH
        ).tournament

        def follow() -> None:
            try:
                for update in admin.RunTournament(
                    pb.RunTournamentRequest(tournament_id=created.tournament_id, concurrency=1),
                    metadata=AUTH,
                ):
                    updates.append(update)
                    first.set()
            except grpc.RpcError:
                pass
            first.set()

        follower = threading.Thread(target=follow)
        follower.start()
        assert first.wait(timeout=120) and updates, "no match finished"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        follower.join(timeout=60)
    tid = created.tournament_id
    assert proc.returncode == 0, err
    assert f"tournament {tid} interrupted; resume it with: cardshark tournament resume {tid}" in err
    assert "Traceback" not in err
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as store:
        status = store.tournament_status(tid)
        assert status.tournament.status == "interrupted"
        assert 1 <= status.finished < status.scheduled == 180
