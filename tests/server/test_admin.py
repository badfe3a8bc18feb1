"""The Admin service of a served instance, plus health and reflection, over real gRPC."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from cardshark.v1 import admin_pb2 as pb
from cardshark.v1 import admin_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
TOKEN = "s3cret-admin"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            str(port),
            "--admin-token",
            TOKEN,
            "--log-dir",
            str(tmp_path / "logs"),
            "--db",
            f"sqlite:///{tmp_path / 'cs.db'}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    address = f"127.0.0.1:{port}"
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
    try:
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_admin_runs_a_tournament_with_managed_bots(served: str) -> None:
    with grpc.insecure_channel(served) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        names = []
        for i, script in enumerate(["knaves_bot.py", "random_bot.py", "random_bot.py"]):
            added = admin.AddBot(
                pb.AddBotRequest(name=f"b{i}", command=f"{sys.executable} {EXAMPLES / script}"),
                metadata=AUTH,
            )
            assert len(added.token) > 20 and added.bot.name == f"b{i}"
            names.append(added.bot.name)
        assert [b.name for b in admin.ListBots(pb.ListBotsRequest(), metadata=AUTH).bots] == names
        created = admin.CreateTournament(
            pb.CreateTournamentRequest(game="knaves", bots=names, rounds=2, seed=3), metadata=AUTH
        ).tournament
        assert created.scheduled == 6 and created.finished == 0
        updates = list(
            admin.RunTournament(
                pb.RunTournamentRequest(tournament_id=created.tournament_id, concurrency=2),
                metadata=AUTH,
            )
        )
        counts = [u.finished for u in updates]
        assert len(updates) == 7 and counts == sorted(counts)  # one per match, then the last
        assert updates[-1].status == "finished" and updates[-1].finished == 6
        rows = admin.GetRankings(pb.GetRankingsRequest(game="knaves"), metadata=AUTH).rows
        assert sorted(r.bot for r in rows) == names and all(r.matches == 6 for r in rows)
        match = admin.GetMatch(pb.GetMatchRequest(match_id=updates[0].last_match_id), metadata=AUTH)
        assert match.status == "finished" and len(match.record["actions"]) > 50
        games = admin.ListGames(pb.ListGamesRequest(), metadata=AUTH).games
        assert "knaves" in [g.name for g in games]


def test_admin_refuses_a_wrong_token_and_names_bad_input(served: str) -> None:
    with grpc.insecure_channel(served) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            admin.ListBots(pb.ListBotsRequest(), metadata=(("authorization", "Bearer nope"),))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as err:
            admin.ListBots(pb.ListBotsRequest())
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as err:
            admin.CreateTournament(
                pb.CreateTournamentRequest(game="chess", bots=["x"]), metadata=AUTH
            )
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "chess" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            admin.CreateTournament(
                pb.CreateTournamentRequest(game="knaves", bots=["x"], format="swiss"),
                metadata=AUTH,
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "unknown format 'swiss'" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            admin.AddBot(pb.AddBotRequest(name="bad name"), metadata=AUTH)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_health_and_reflection_are_on(served: str) -> None:
    with grpc.insecure_channel(served) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "cardshark.v1.Referee"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (reply,) = list(reflect.ServerReflectionInfo(iter([request])))
        names = {s.name for s in reply.list_services_response.service}
        assert {"cardshark.v1.Referee", "cardshark.v1.Admin", "grpc.health.v1.Health"} <= names


def test_serve_refuses_a_busy_port_in_one_line(served: str, tmp_path: Path) -> None:
    port = served.rsplit(":", 1)[1]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            port,
            "--db",
            f"sqlite:///{tmp_path / 'other.db'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "cannot serve" in run.stderr
    assert "Traceback" not in run.stderr


def test_cancel_stops_a_running_tournament_and_keeps_what_finished(served: str) -> None:
    import threading

    with grpc.insecure_channel(served) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        names = []
        for i in range(3):
            command = f"{sys.executable} {EXAMPLES / 'random_bot.py'}"
            names.append(
                admin.AddBot(
                    pb.AddBotRequest(name=f"c{i}", command=command), metadata=AUTH
                ).bot.name
            )
        created = admin.CreateTournament(
            pb.CreateTournamentRequest(game="knaves", bots=names, rounds=30), metadata=AUTH
        ).tournament
        seen: list[pb.TournamentProgress] = []
        errors: list[grpc.RpcError] = []

        def follow() -> None:
            try:
                for update in admin.RunTournament(
                    pb.RunTournamentRequest(tournament_id=created.tournament_id), metadata=AUTH
                ):
                    seen.append(update)
            except grpc.RpcError as err:
                errors.append(err)

        thread = threading.Thread(target=follow)
        thread.start()
        deadline = time.monotonic() + 60
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped = admin.CancelTournament(
            pb.CancelTournamentRequest(tournament_id=created.tournament_id), metadata=AUTH
        )
        thread.join(timeout=30)
        assert stopped.status == "cancelled"
        assert 2 <= stopped.finished < stopped.scheduled == 90
        assert errors and errors[0].code() == grpc.StatusCode.CANCELLED
        again = admin.GetTournament(
            pb.GetTournamentRequest(tournament_id=created.tournament_id), metadata=AUTH
        )
        assert again.finished == stopped.finished
