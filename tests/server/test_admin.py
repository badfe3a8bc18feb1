"""The Admin service of a served instance, plus health and reflection, over real gRPC."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message_factory import GetMessageClass
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


def start_serve(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """`cardshark serve` on a free port with a database in tmp_path, once it answers."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            str(port),
            "--web-port",
            "0",
            "--log-dir",
            str(tmp_path / "logs"),
            "--db",
            f"sqlite:///{tmp_path / 'cs.db'}",
            *args,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "CARDSHARK_ADMIN_TOKEN"} | (env or {}),
    )
    address = f"127.0.0.1:{port}"
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
    return proc, address


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    proc, address = start_serve(tmp_path, env={"CARDSHARK_ADMIN_TOKEN": TOKEN})
    try:
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_admin_runs_a_tournament_with_managed_bots(served: str, tmp_path: Path) -> None:
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
            pb.CreateTournamentRequest(game="knaves", bots=names, rounds=1, seed=3), metadata=AUTH
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
        # serve --log-dir holds the bots' stderr, as for tournaments run from the CLI
        logs = tmp_path / "logs" / f"tournament-{created.tournament_id}"
        assert sorted(p.name for p in logs.iterdir()) == [f"b{i}.stderr.log" for i in range(3)]
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
    assert run.returncode == 2
    assert run.stderr == (
        f"error: cannot listen on 127.0.0.1:{port} for bots: port {port} is in use "
        "(another program, or another cardshark serve, tournament or bot test); "
        "choose another with --port PORT (0: any free port)\n"
    )
    assert not (tmp_path / "other.db").exists()  # refused before anything was stored


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
        assert 2 <= stopped.finished < stopped.scheduled == 180
        assert errors and errors[0].code() == grpc.StatusCode.CANCELLED
        again = admin.GetTournament(
            pb.GetTournamentRequest(tournament_id=created.tournament_id), metadata=AUTH
        )
        assert again.finished == stopped.finished


def snapshot(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the SQLite file."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables
        }


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll a condition of the server's state, failing after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


ADMIN_RPCS = sorted(n for n in vars(admin_pb2_grpc.AdminServicer) if not n.startswith("_"))
DESCRIPTOR = pb.DESCRIPTOR.services_by_name["Admin"]


def test_every_admin_rpc_without_the_right_token_is_refused_and_changes_nothing(
    served: str, tmp_path: Path
) -> None:
    assert sorted(DESCRIPTOR.methods_by_name) == ADMIN_RPCS
    with grpc.insecure_channel(served) as channel:
        admin = admin_pb2_grpc.AdminStub(channel)
        remote = [admin.AddBot(pb.AddBotRequest(name=f"r{i}"), metadata=AUTH) for i in range(3)]
        names = [r.bot.name for r in remote]
        admin.AddBot(pb.AddBotRequest(name="spare"), metadata=AUTH)

        def create() -> int:
            request = pb.CreateTournamentRequest(game="knaves", bots=names, seed=1)
            return int(admin.CreateTournament(request, metadata=AUTH).tournament.tournament_id)

        running, idle = create(), create()
        updates: list[pb.TournamentProgress] = []
        follow = threading.Thread(
            target=lambda: updates.extend(
                admin.RunTournament(pb.RunTournamentRequest(tournament_id=running), metadata=AUTH)
            )
        )
        follow.start()

        def status() -> str:
            request = pb.GetTournamentRequest(tournament_id=running)
            return str(admin.GetTournament(request, metadata=AUTH).status)

        # Its first match now waits for its remote bots, which are not there: nothing writes.
        wait_until(lambda: status() == "running")
        # Each request would act if it were authorized.
        requests: dict[str, Any] = {
            "AddBot": pb.AddBotRequest(name="intruder", command="sh -c true"),
            "RemoveBot": pb.RemoveBotRequest(name="spare"),
            "CreateTournament": pb.CreateTournamentRequest(game="knaves", bots=names),
            "RunTournament": pb.RunTournamentRequest(tournament_id=idle),
            "CancelTournament": pb.CancelTournamentRequest(tournament_id=running),
            "GetTournament": pb.GetTournamentRequest(tournament_id=running),
            "GetRankings": pb.GetRankingsRequest(game="knaves"),
            "GetMatch": pb.GetMatchRequest(match_id=1),
        }
        before = snapshot(tmp_path / "cs.db")
        refused = []
        for metadata in ((), (("authorization", "Bearer nope"),), (("authorization", TOKEN),)):
            for name in ADMIN_RPCS:
                method = DESCRIPTOR.methods_by_name[name]
                request = requests.get(name) or GetMessageClass(method.input_type)()
                with pytest.raises(grpc.RpcError) as err:
                    reply = getattr(admin, name)(request, metadata=metadata)
                    if method.server_streaming:
                        list(reply)
                assert snapshot(tmp_path / "cs.db") == before, name
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
                refused.append(name)
        assert len(refused) == 3 * len(ADMIN_RPCS)
        assert status() == "running" and follow.is_alive()
        # It keeps running: its bots arrive and it plays to the end.
        bots = [
            subprocess.Popen(
                [sys.executable, str(EXAMPLES / "random_bot.py")],
                env={**os.environ, "CARDSHARK_SERVER": served, "CARDSHARK_TOKEN": r.token},
                stderr=subprocess.DEVNULL,
            )
            for r in remote
        ]
        try:
            follow.join(timeout=120)
        finally:
            for bot in bots:
                bot.terminate()
                bot.wait(timeout=30)
        assert updates and updates[-1].status == "finished"
        assert updates[-1].finished == updates[-1].scheduled == 6


def test_the_admin_token_comes_from_a_0600_file_or_the_environment_and_the_flag_warns(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "admin.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)

    def refused(*args: str) -> str:
        run = subprocess.run(
            [sys.executable, "-m", "server.cli", "serve", "--port", str(free_port()), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            env={k: v for k, v in os.environ.items() if k != "CARDSHARK_ADMIN_TOKEN"},
        )
        assert run.returncode == 2 and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        return run.stderr

    assert "chmod 600" in refused("--admin-token-file", str(token_file))
    assert "cannot read" in refused("--admin-token-file", str(tmp_path / "missing"))
    token_file.chmod(0o600)
    for args, env, warned in (
        (("--admin-token-file", str(token_file)), {}, False),
        ((), {"CARDSHARK_ADMIN_TOKEN": TOKEN}, False),
        (("--admin-token", TOKEN), {}, True),
    ):
        proc, address = start_serve(tmp_path, *args, env=env)
        try:
            with grpc.insecure_channel(address) as channel:
                admin = admin_pb2_grpc.AdminStub(channel)
                assert admin.ListBots(pb.ListBotsRequest(), metadata=AUTH).bots == []
        finally:
            proc.terminate()
            _, stderr = proc.communicate(timeout=30)
        assert ("visible to every user in `ps`" in stderr) == warned, (args, stderr)
