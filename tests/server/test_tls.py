"""TLS and mutual TLS end to end: certificates made here, real bot processes, real sockets."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.match.records import ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.arena import Arena
from server.transport.tls import TlsConfig, TlsFileError, is_loopback, load_tls, plain_tcp_warning
from tests.clients.kits import kit_commands
from tests.server.certs import CertificateAuthority, Issued
from tests.server.conftest import RANDOM_BOT

ROOT = Path(__file__).resolve().parents[2]
CLOCK = ClockSettings(move_ms=3000)
NO_SHOW_S = 3.0  # how long a match waits for a bot that cannot get in


@dataclass(frozen=True)
class Pki:
    """The CA bots trust, the server's and a client's certificate, and an unrelated CA."""

    ca: CertificateAuthority
    server: Issued
    client: Issued
    other_ca: CertificateAuthority
    other_client: Issued  # a client certificate the other CA signed

    def tls(self, mutual: bool = False) -> TlsConfig:
        """The server's TLS settings; mutual: client certificates must chain to ca."""
        return TlsConfig.from_files(
            self.server.cert, self.server.key, self.ca.pem if mutual else None
        )

    def env(self, ca: Path | None = None, client: Issued | None = None) -> dict[str, str]:
        """A bot's TLS environment: trust ca (default: the right one), present client."""
        env = {"CARDSHARK_TLS_CA": str(ca or self.ca.pem)}
        if client is not None:
            env |= {"CARDSHARK_TLS_CERT": str(client.cert), "CARDSHARK_TLS_KEY": str(client.key)}
        return env


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    tmp = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority(tmp, "ca")
    other = CertificateAuthority(tmp, "other-ca")
    return Pki(
        ca,
        ca.issue("server", server=True),
        ca.issue("client", server=False),
        other,
        other.issue("other-client", server=False),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Bot:
    """A bot process dialing the arena with a token and TLS settings from its environment."""

    def __init__(
        self,
        arena: Arena,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        server: str | None = None,
    ) -> None:
        self.token = arena.register(name)
        self.identity = arena.identity(self.token)
        self.argv = list(argv)
        self.env = dict(
            os.environ,
            CARDSHARK_SERVER=server or arena.address,
            CARDSHARK_TOKEN=self.token,
            GRPC_VERBOSITY="NONE",
            **env,
        )
        for key in ("CARDSHARK_TLS_CA", "CARDSHARK_TLS_CERT", "CARDSHARK_TLS_KEY"):
            if key not in env:
                self.env.pop(key, None)
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> Bot:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return self

    async def exit(self, timeout: float = 30) -> tuple[int, str]:
        """Wait for the process to end by itself: its exit code and stderr."""
        assert self.process is not None and self.process.stderr is not None
        err = await asyncio.wait_for(self.process.stderr.read(), timeout)
        return await asyncio.wait_for(self.process.wait(), timeout), err.decode()

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()


async def play(
    arena: Arena, bots: Sequence[Bot], clock: ClockSettings = CLOCK, seated: list[str] | None = None
) -> MatchRecord:
    """Start the bots, play one Knaves match (noting who is connected at its end), stop them."""
    try:
        for bot in bots:
            await bot.start()
        seats: list[BotIdentity] = [b.identity for b in bots]
        record = await arena.play("knaves", seats, seed=11, clock=clock)
        if seated is not None and arena.running is not None:
            seated.extend(b.name for b in arena.running.hub.connected())
        return record
    finally:
        for bot in bots:
            await bot.stop()


def test_python_bots_play_over_tls_with_no_faults(tmp_path: Path, pki: Pki) -> None:
    async def run() -> MatchRecord:
        async with Arena(log_dir=tmp_path, tls=pki.tls()) as arena:
            assert arena.running is not None and arena.running.tls
            bots = [Bot(arena, f"py{i}", RANDOM_BOT, pki.env()) for i in range(2)]
            # the third passes its CA as a flag instead of the environment
            bots.append(Bot(arena, "py-flag", [*RANDOM_BOT, "--tls-ca", str(pki.ca.pem)], {}))
            return await play(arena, bots)

    record = asyncio.run(run())
    assert record.status == "finished", record.reason
    assert record.faults == []


def test_mutual_tls_seats_bots_with_a_client_certificate_and_no_others(
    tmp_path: Path, pki: Pki
) -> None:
    async def run() -> tuple[MatchRecord, list[str]]:
        async with Arena(log_dir=tmp_path, tls=pki.tls(mutual=True)) as arena:
            good = Bot(arena, "with-cert", RANDOM_BOT, pki.env(client=pki.client))
            no_cert = Bot(arena, "no-cert", RANDOM_BOT, pki.env())
            foreign = Bot(arena, "foreign-cert", RANDOM_BOT, pki.env(client=pki.other_client))
            clock = ClockSettings(move_ms=3000, no_show_s=NO_SHOW_S)
            seated: list[str] = []
            record = await play(arena, [good, no_cert, foreign], clock, seated)
            return record, seated

    record, connected = asyncio.run(run())
    assert record.status == "finished", record.reason
    faults = {(f.seat, f.kind) for f in record.faults}
    assert faults == {(1, "no_show"), (2, "no_show")}, record.faults
    assert record.forfeited == [False, True, True]
    assert connected == ["with-cert"]


def test_bot_trusting_another_ca_exits_with_a_clear_error_and_is_never_seated(
    tmp_path: Path, pki: Pki
) -> None:
    async def run() -> tuple[int, str, list[BotIdentity]]:
        async with Arena(log_dir=tmp_path, tls=pki.tls()) as arena:
            assert arena.running is not None
            bot = await Bot(arena, "gullible", RANDOM_BOT, pki.env(ca=pki.other_ca.pem)).start()
            try:
                code, err = await bot.exit()
            finally:
                await bot.stop()
            return code, err, arena.running.hub.connected()

    code, err, connected = asyncio.run(run())
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "TLS handshake failed" in lines[0], err
    assert "CERTIFICATE_VERIFY_FAILED" in lines[0], err
    assert connected == []


def test_bot_refuses_a_missing_ca_file_in_one_line(tmp_path: Path, pki: Pki) -> None:
    async def run() -> tuple[int, str]:
        async with Arena(log_dir=tmp_path, tls=pki.tls()) as arena:
            missing = tmp_path / "nowhere-ca.pem"
            bot = await Bot(arena, "typo", RANDOM_BOT, pki.env(ca=missing)).start()
            try:
                return await bot.exit()
            finally:
                await bot.stop()

    code, err = asyncio.run(run())
    assert code == 2
    assert "nowhere-ca.pem" in err and "Traceback" not in err, err


def test_python_bots_play_over_a_unix_socket_while_tcp_speaks_tls(tmp_path: Path, pki: Pki) -> None:
    async def run() -> MatchRecord:
        async with Arena(log_dir=tmp_path, tls=pki.tls(mutual=True)) as arena:
            assert arena.running is not None
            unix = arena.running.unix_address
            assert unix is not None and unix.startswith("unix:/")
            bots = [Bot(arena, f"py{i}", RANDOM_BOT, {}, server=unix) for i in range(3)]
            return await play(arena, bots)

    record = asyncio.run(run())
    assert record.status == "finished", record.reason
    assert record.faults == []


def test_node_cpp_and_bridge_play_over_mutual_tls_and_a_unix_socket(
    tmp_path: Path, pki: Pki
) -> None:
    kits = kit_commands()
    names = ["node", "cpp", "perl-bridge"]

    async def run() -> tuple[MatchRecord, MatchRecord]:
        async with Arena(log_dir=tmp_path, tls=pki.tls(mutual=True)) as arena:
            assert arena.running is not None and arena.running.unix_address is not None
            env = pki.env(client=pki.client)
            over_tls = await play(arena, [Bot(arena, n, kits[n], env) for n in names])
            unix = arena.running.unix_address
            local = [Bot(arena, f"{n}-unix", kits[n], {}, server=unix) for n in names]
            return over_tls, await play(arena, local)

    for record in asyncio.run(run()):
        assert record.status == "finished", record.reason
        assert record.faults == []


# -- the command line -----------------------------------------------------------------------


def cli(*args: str, db: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", *args, "--db", db],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )


@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--port", "0", "--web-port", "0"],
        ["tournament", "run", "knaves", "--bots", "a,b,c"],
        ["tournament", "resume", "1"],
    ],
    ids=["serve", "tournament-run", "tournament-resume"],
)
def test_a_missing_tls_file_is_one_error_line_naming_it(
    tmp_path: Path, pki: Pki, command: list[str]
) -> None:
    missing = tmp_path / "missing.pem"
    proc = cli(
        *command,
        "--tls-cert",
        str(missing),
        "--tls-key",
        str(pki.server.key),
        db=f"sqlite:///{tmp_path / 'cs.db'}",
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(missing) in lines[0] and "--tls-cert" in lines[0], err


def test_a_key_without_a_certificate_is_refused(tmp_path: Path, pki: Pki) -> None:
    proc = cli(
        "serve",
        "--port",
        "0",
        "--web-port",
        "0",
        "--tls-key",
        str(pki.server.key),
        db=f"sqlite:///{tmp_path / 'cs.db'}",
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert len(err.strip().splitlines()) == 1 and "--tls-cert" in err, err


def serve_until_ready(proc: subprocess.Popen[str], marker: str) -> list[str]:
    """stdout lines up to and including the one with marker (the server prints it when up)."""
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:
        seen.append(line)
        if marker in line:
            return seen
    _, err = proc.communicate(timeout=30)
    raise AssertionError(f"server exited ({proc.returncode}) before {marker!r}: {seen} {err}")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return err


def test_plain_tcp_on_all_interfaces_warns(tmp_path: Path) -> None:
    proc = cli(
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "0",
        "--web-port",
        "0",
        db=f"sqlite:///{tmp_path / 'cs.db'}",
    )
    try:
        serve_until_ready(proc, "serving on")
    finally:
        err = stop(proc)
    warnings = [line for line in err.splitlines() if "without TLS" in line]
    assert len(warnings) == 1 and "0.0.0.0" in warnings[0], err
    assert "author keys and submitted code cross the network in clear" in warnings[0]


def test_serve_with_tls_speaks_grpc_and_https_and_does_not_warn(tmp_path: Path, pki: Pki) -> None:
    web = free_port()
    proc = cli(
        "serve", "--host", "0.0.0.0", "--port", "0", "--web-port", str(web),
        "--tls-cert", str(pki.server.cert), "--tls-key", str(pki.server.key),
        db=f"sqlite:///{tmp_path / 'cs.db'}",
    )  # fmt: skip
    try:
        lines = serve_until_ready(proc, "web page on")
        serving = next(line for line in lines if "serving on" in line)
        assert "(TLS)" in serving and f"https://0.0.0.0:{web}/" in lines[-1]
        port = serving.split("serving on ")[1].split()[0].rsplit(":", 1)[1]
        ca = pki.ca.pem.read_bytes()
        with grpc.secure_channel(f"127.0.0.1:{port}", grpc.ssl_channel_credentials(ca)) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            reply = health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        plain = grpc.insecure_channel(f"127.0.0.1:{port}")  # plain text is not spoken
        with plain, pytest.raises(grpc.RpcError):
            health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
        context = ssl.create_default_context(cafile=str(pki.ca.pem))
        with urllib.request.urlopen(f"https://127.0.0.1:{web}/", context=context, timeout=10) as r:
            assert r.status == 200
        with pytest.raises(OSError):  # the page is not served in clear
            urllib.request.urlopen(f"http://127.0.0.1:{web}/", timeout=10).read()
    finally:
        err = stop(proc)
    assert "without TLS" not in err, err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_only_loopback_is_exempt_from_the_plain_tcp_warning(
    host: str, loopback: bool, pki: Pki
) -> None:
    assert is_loopback(host) is loopback
    assert (plain_tcp_warning(host, None) is None) is loopback
    assert plain_tcp_warning(host, pki.tls()) is None


def test_tls_files_are_checked_and_named(tmp_path: Path, pki: Pki) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("hello\n")
    cases = {
        (None, pki.server.key, None): "--tls-cert and --tls-key go together",
        (None, None, pki.ca.pem): "--tls-client-ca needs --tls-cert",
        (junk, pki.server.key, None): f"--tls-cert {junk}: not a PEM file",
        (pki.server.cert, junk, None): f"--tls-key {junk}: not a PEM file",
        (pki.server.cert, pki.server.key, tmp_path / "gone.pem"): "--tls-client-ca",
        (pki.server.cert, pki.client.key, None): f"--tls-key {pki.client.key} does not fit",
    }
    for (cert, key, ca), message in cases.items():
        with pytest.raises(TlsFileError, match=re.escape(message)):
            load_tls(cert, key, ca)
    assert load_tls(None, None) is None
    loaded = load_tls(pki.server.cert, pki.server.key, pki.ca.pem)
    assert loaded is not None and loaded.mutual
