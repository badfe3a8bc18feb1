"""The local transport: its framing, fault parity with gRPC, and a server that stays bounded.

The fault tests of test_faults.py run over both transports with the same assertions; here the
same hostile match is played over both and compared move for move, and the faults only a
byte stream can have (an announced 100 MB frame, a flood, text that is not frames) are shown
to be refused with a fault while the server's memory stays bounded.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from cardshark.v1 import referee_pb2 as pb
from games.registry import get_game
from server.bots.sandbox import SandboxPolicy, unavailable_reason
from server.codec.bot_env import FD3_LAUNCHER
from server.match.hub import BotHub
from server.match.limits import MAX_MESSAGE_BYTES
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena, check_transport
from server.transport import service
from server.transport.frames import FrameError, frame, split_frames
from server.transport.local import LocalConnection, serve_socket, socket_pair
from tests.server.conftest import HOSTILE_BOT, PYTHON, RANDOM_BOT, ROOT, TRANSPORTS

CLOCK = ClockSettings(move_ms=400, bank_ms=0, fault_limit=3, grace_s=1.5, no_show_s=8)
RULE_BOT = [PYTHON, str(ROOT / "clients" / "python" / "examples" / "knaves_bot.py")]
PERL_BOT = ROOT / "clients" / "perl" / "random_bot.pl"
RSS_GROWTH_CAP_KB = 48 * 1024  # the server may not grow by anything near an announced frame


# --- framing ---------------------------------------------------------------------------


def test_frames_split_whole_and_wait_for_the_rest() -> None:
    msgs = [pb.BotMessage(decision=pb.Decision(request_id=i, action_id="x" * i)) for i in (1, 300)]
    data = b"".join(frame(m.SerializeToString()) for m in msgs)
    frames, used = split_frames(data)
    assert [pb.BotMessage.FromString(f) for f in frames] == msgs and used == len(data)
    for cut in range(len(data)):  # any prefix: the whole frames in it, the rest kept
        frames, used = split_frames(data[:cut])
        assert used <= cut and b"".join(frame(f) for f in frames) == data[:used]


def test_an_announced_length_over_the_cap_is_refused_before_its_bytes_arrive() -> None:
    header = frame(b"")[:0] + bytes([0x80, 0x80, 0x80, 0x32])  # 100 MiB, and no payload yet
    with pytest.raises(FrameError, match="over the"):
        split_frames(header)
    assert split_frames(frame(b"x" * MAX_MESSAGE_BYTES)[:10])[0] == []  # at the cap: waits


def test_a_length_of_more_than_ten_varint_bytes_is_refused() -> None:
    with pytest.raises(FrameError, match="more than 10 bytes"):
        split_frames(b"\x80" * 11)
    assert split_frames(b"\x80" * 9) == ([], 0)  # may still end: wait for more


def test_an_unknown_transport_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="unknown transport 'http'; allowed: local, grpc"):
        check_transport("http")
    with pytest.raises(ValueError, match="allowed: local, grpc"):
        Arena(transport="pipes")


# --- fault parity: the same match over both transports --------------------------------


async def hostile_match(
    tmp_path: Path,
    transport: str,
    mode: str,
    bad: int,
    honest: list[str] = RULE_BOT,
    watch_rss: bool = False,
) -> tuple[MatchRecord, int]:
    """A Knaves match of a hostile seat 0 against two rule bots (all deterministic), and how
    far the server's RSS rose above where it started (kB) while it ran."""
    peak = start = rss_kb()
    async with Arena(log_dir=tmp_path / transport, transport=transport) as arena:
        bots = []
        for seat, name in enumerate(["hostile", "honest1", "honest2"]):
            token = arena.register(name)
            await arena.spawn(name, [*HOSTILE_BOT, mode, str(bad)] if seat == 0 else honest, token)
            bots.append(arena.identity(token))
        match = asyncio.create_task(arena.play("knaves", bots, seed=11, clock=CLOCK))
        while not match.done():
            if watch_rss:
                peak = max(peak, rss_kb())
            await asyncio.wait({match}, timeout=0.005)
        return match.result(), peak - start


def rss_kb() -> int:
    """This process's resident set (the server runs in it)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def kinds(record: MatchRecord) -> list[str]:
    return [f.kind for f in record.faults_of(0)]


def check_whole(record: MatchRecord) -> None:
    assert record.status == "finished", record.reason
    game = get_game("knaves")
    replayed = game.replay(record.seed, 3, record.options, record.actions)
    assert list(game.result(replayed).scores) == record.scores
    assert not record.faults_of(1) and not record.faults_of(2), "honest seats were charged"


FLOODED = ["malformed"] * (service.MALFORMED_PER_STREAM + 1)
PARITY = {  # mode, bad requests: the faults charged (the same on both transports)
    ("slow", 2): ["timeout", "timeout"],
    ("illegal", 5): ["illegal_action"] * 4,  # forfeited at the 4th: not asked again
    ("unknown", 2): ["unknown_action"] * 2,
    ("garbage", 3): ["malformed"] * 3,
    ("other_seat", 2): ["not_yours"] * 2,
    ("duplicate", 2): ["duplicate"] * 2,
    ("crash", 1): ["disconnected"],
    ("vanish", 1): ["disconnected"],
    ("stuck", 1): ["timeout"],
    ("flood", 1): FLOODED,
}


@pytest.mark.parametrize(("mode", "bad"), sorted(PARITY))
def test_every_fault_is_the_same_over_both_transports(tmp_path: Path, mode: str, bad: int) -> None:
    async def both() -> dict[str, MatchRecord]:
        return {t: (await hostile_match(tmp_path, t, mode, bad))[0] for t in TRANSPORTS}

    records = asyncio.run(both())
    for record in records.values():
        check_whole(record)
        assert kinds(record) == PARITY[mode, bad]
    grpc, local = records["grpc"], records["local"]
    assert local.ranks == grpc.ranks and local.forfeited == grpc.forfeited
    assert local.scores == grpc.scores and local.actions == grpc.actions
    if mode == "flood":
        # Whether a later garbage frame still lands on seat 0's next request (opened while
        # the burst is being read) or arrives as a stray is timing, on either transport; the
        # fault of the request that started the flood is not.
        ours, theirs = (
            min((f for f in r.faults if f.fallback), key=lambda f: f.decision)
            for r in (local, grpc)
        )
        assert (ours.kind, ours.decision, ours.fallback) == (
            theirs.kind,
            theirs.decision,
            theirs.fallback,
        )
    else:
        # the same faults with the same fallbacks (strays are recorded as they arrive: a
        # burst read at once may be recorded before the fault of the request it interrupted)
        assert sorted((f.kind, f.fallback) for f in local.faults) == sorted(
            (f.kind, f.fallback) for f in grpc.faults
        )
    if kinds(local)[0] == "timeout":  # cut at the deadline on both
        for record in records.values():
            assert record.move_ms[record.faults_of(0)[0].decision] == pytest.approx(400, abs=1)


# --- what only a byte stream can send --------------------------------------------------


def test_a_100_mb_frame_is_refused_with_a_fault_and_the_server_stays_small(
    tmp_path: Path,
) -> None:
    record, grown = asyncio.run(hostile_match(tmp_path, "local", "oversize", 1, watch_rss=True))
    check_whole(record)
    assert kinds(record) == ["malformed", "disconnected"]
    assert "104857600 bytes, over the 4194304-byte cap" in record.faults_of(0)[0].detail
    assert record.forfeited == [True, False, False] and record.ranks[0] == 3
    assert grown < RSS_GROWTH_CAP_KB, f"the server grew by {grown} kB"


def test_an_oversize_message_over_grpc_also_loses_the_seat(tmp_path: Path) -> None:
    # gRPC refuses it by its own cap before the service sees it: the stream just ends, so
    # only the disconnect is charged; the bot forfeits and ranks last as over the local one.
    record, _ = asyncio.run(hostile_match(tmp_path, "grpc", "oversize", 1))
    check_whole(record)
    assert kinds(record) == ["disconnected"]
    assert record.forfeited == [True, False, False] and record.ranks[0] == 3


def test_a_flood_of_frames_is_cut_off_and_the_server_stays_small(tmp_path: Path) -> None:
    record, grown = asyncio.run(hostile_match(tmp_path, "local", "flood", 1, watch_rss=True))
    check_whole(record)
    assert kinds(record) == FLOODED
    assert record.forfeited == [True, False, False] and record.ranks[0] == 3
    assert grown < RSS_GROWTH_CAP_KB, f"the server grew by {grown} kB"


def test_text_written_to_the_socket_is_malformed_then_cut_off(tmp_path: Path) -> None:
    # a bot printing its debug output to fd 3 instead of stderr: lengths and bytes of text
    record, grown = asyncio.run(hostile_match(tmp_path, "local", "noise", 1, watch_rss=True))
    check_whole(record)
    assert set(kinds(record)) == {"malformed"} and 1 <= len(kinds(record)) <= len(FLOODED)
    assert record.forfeited == [True, False, False] and record.ranks[0] == 3
    assert grown < RSS_GROWTH_CAP_KB, f"the server grew by {grown} kB"


def test_a_bot_printing_to_stdout_plays_on(tmp_path: Path) -> None:
    chatty = [
        PYTHON,
        "-c",
        "import runpy, sys; print('debug ' * 100000, flush=True); "
        f"sys.argv = [{RANDOM_BOT[1]!r}]; runpy.run_path(sys.argv[0], run_name='__main__')",
    ]
    record, _ = asyncio.run(hostile_match(tmp_path, "local", "garbage", 0, honest=chatty))
    check_whole(record)
    assert record.faults == []


def test_a_hello_with_another_bots_token_is_refused_on_a_local_socket(tmp_path: Path) -> None:
    async def run() -> MatchRecord:
        async with Arena(log_dir=tmp_path) as arena:
            tokens = [arena.register(n) for n in ("thief", "a", "b")]
            spare = arena.register("victim")  # a valid token, but not the one of thief's fd
            thief = [
                PYTHON,
                "-c",
                f"import os, runpy, sys; os.environ['CARDSHARK_TOKEN'] = {spare!r}; "
                f"sys.argv = [{RANDOM_BOT[1]!r}]; runpy.run_path(sys.argv[0], run_name='__main__')",
            ]
            for name, token in zip(("thief", "a", "b"), tokens, strict=True):
                await arena.spawn(name, thief if name == "thief" else RANDOM_BOT, token)
            bots = [arena.identity(t) for t in tokens]
            clock = ClockSettings(move_ms=400, no_show_s=3)
            return await arena.play("knaves", bots, seed=5, clock=clock)

    record = asyncio.run(run())
    assert kinds(record) == ["no_show"]
    assert "is not running: it exited with status 2" in record.faults_of(0)[0].detail


@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_local_transport_in_the_sandbox_with_no_network_and_cpu_clocks(tmp_path: Path) -> None:
    probe = (
        "import os, runpy, socket, sys\n"
        "print('SERVER', os.environ['CARDSHARK_SERVER'], file=sys.stderr)\n"
        "print('SOCKET', os.path.exists('/run/cardshark/referee.sock'), file=sys.stderr)\n"
        "print('FD3', socket.socket(fileno=os.dup(3)).family.name, file=sys.stderr)\n"
        "print('NET', [n for _, n in socket.if_nameindex()], file=sys.stderr, flush=True)\n"
        f"sys.argv = [{HOSTILE_BOT[1]!r}, 'stuck', '1']\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )  # given by -c: a file under /tmp would be hidden by the sandbox's own /tmp

    async def run() -> tuple[MatchRecord, str, bool]:
        policy = SandboxPolicy(readonly=(*SandboxPolicy().readonly, str(ROOT / "tests")))
        async with Arena(log_dir=tmp_path / "logs", sandbox=policy) as arena:
            assert arena.running is not None
            tokens = [arena.register(n) for n in ("probe", "a", "b")]
            for name, token in zip(("probe", "a", "b"), tokens, strict=True):
                command = [PYTHON, "-c", probe] if name == "probe" else RULE_BOT
                await arena.spawn(name, command, token)
            metered = bool(arena.running.hub.meters)
            bots = [arena.identity(t) for t in tokens]
            record = await arena.play("knaves", bots, seed=11, clock=CLOCK)
            log = (tmp_path / "logs" / "probe.stderr.log").read_text()
            return record, log, metered

    record, log, metered = asyncio.run(run())
    check_whole(record)
    assert "SERVER fd:3" in log and "SOCKET False" in log and "FD3 AF_UNIX" in log, log
    assert "NET ['lo']" in log, log
    assert kinds(record) == ["timeout"]
    if metered:  # where cgroups count its CPU, the managed bot's clock is its CPU
        assert "CPU clock" in record.faults_of(0)[0].detail


@pytest.mark.skipif(shutil.which("perl") is None, reason="no perl")
def test_the_bridge_plays_a_perl_bot_over_the_local_transport(tmp_path: Path) -> None:
    bridged = [PYTHON, "-m", "cardshark_bot.bridge", "--", "perl", str(PERL_BOT)]

    async def run() -> MatchRecord:
        async with Arena(log_dir=tmp_path) as arena:
            tokens = [arena.register(n) for n in ("perl", "a", "b")]
            for name, token in zip(("perl", "a", "b"), tokens, strict=True):
                await arena.spawn(name, bridged if name == "perl" else RANDOM_BOT, token)
            bots = [arena.identity(t) for t in tokens]
            return await arena.play("knaves", bots, seed=2, clock=ClockSettings(move_ms=2000))

    record = asyncio.run(run())
    assert record.status == "finished", record.reason
    assert record.faults == []


@pytest.mark.parametrize(
    "command",
    [
        ["tournament", "run", "knaves", "--bots", "a,b,c"],
        ["tournament", "resume", "1"],
        ["serve"],
        ["bot", "test", "a", "--game", "knaves"],
        ["compare", "a", "b", "--game", "knaves"],
        ["demo"],
    ],
)
def test_every_command_that_starts_managed_bots_refuses_an_unknown_transport(
    tmp_path: Path, command: list[str]
) -> None:
    run = subprocess.run(
        [PYTHON, "-m", "server.cli", *command, "--transport", "http"],
        cwd=tmp_path,
        env={**os.environ, "CARDSHARK_DB": f"sqlite:///{tmp_path / 't.db'}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "unknown transport 'http'; allowed: local, grpc" in run.stderr
    assert not (tmp_path / "t.db").exists() or command[0] != "tournament"


# --- the Python SDK on fd 3, driven by hand ---------------------------------------------

SDK_LOST = "cardshark: the server closed fd:3 without a Goodbye; stopping"


def sdk_bot(tmp_path: Path) -> tuple[socket.socket, subprocess.Popen[str]]:
    """The Python random bot with its end of a socket pair on fd 3, and the test's end."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(20)
    env = dict(os.environ, CARDSHARK_SERVER="fd:3", CARDSHARK_TOKEN="tok")
    with theirs:
        process = subprocess.Popen(
            [*FD3_LAUNCHER, *RANDOM_BOT],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    return ours, process


def read_frame(sock: socket.socket) -> pb.BotMessage | None:
    data = b""
    while True:
        frames, used = split_frames(data)
        if frames:
            return pb.BotMessage.FromString(frames[0])
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk


@pytest.mark.parametrize("ending", ["goodbye", "closed", "before_welcome"])
def test_the_python_sdk_on_fd3_ends_as_the_other_kits_do(tmp_path: Path, ending: str) -> None:
    sock, process = sdk_bot(tmp_path)
    with sock:
        hello = read_frame(sock)
        assert hello is not None and hello.hello.token == "tok"
        if ending != "before_welcome":
            welcome = pb.Welcome(bot_name="random", protocol_version=1, server_version="t")
            sock.sendall(frame(pb.RefereeMessage(welcome=welcome).SerializeToString()))
            request = pb.DecisionRequest(request_id=7, legal_actions=[pb.Action(id="a")])
            sock.sendall(frame(pb.RefereeMessage(request=request).SerializeToString()))
            answer = read_frame(sock)
            assert answer is not None and answer.decision.request_id == 7
            assert answer.decision.action_id == "a"
        if ending == "goodbye":
            bye = pb.Goodbye(reason="tournament finished")
            sock.sendall(frame(pb.RefereeMessage(goodbye=bye).SerializeToString()))
            assert read_frame(sock) is None  # it closes its end
        sock.shutdown(socket.SHUT_RDWR)
    _, err = process.communicate(timeout=20)
    lines = [line for line in err.splitlines() if line.strip()]
    expected = {
        "goodbye": (0, ["cardshark: tournament finished; nothing more to play"]),
        "closed": (1, [SDK_LOST]),
        "before_welcome": (
            2,
            [
                "refused by fd:3: the server closed descriptor 3 without a Welcome "
                "(refused: its log says why)"
            ],
        ),
    }[ending]
    assert (process.returncode, lines) == expected


# --- closing: the server's stop never raises ------------------------------------------

QUEUED = 8 << 20  # more than a socket pair holds: most of it waits in the transport


async def served_connection() -> tuple[LocalConnection, socket.socket]:
    """The server's end of a socket pair, served on the running loop, and the bot's end."""
    ours, theirs = socket_pair()
    connection = await serve_socket(ours, BotHub(), lambda token: None, "tok", "t", "bot")
    theirs.setblocking(False)
    return connection, theirs


async def read_to_the_end(sock: socket.socket) -> int:
    """Read sock until its peer closes; how many bytes came."""
    loop, received = asyncio.get_running_loop(), 0
    while chunk := await loop.sock_recv(sock, 1 << 20):
        received += len(chunk)
    return received


def test_close_after_a_closed_stream_has_flushed_its_queue_does_not_raise() -> None:
    async def run() -> int:
        connection, theirs = await served_connection()
        with theirs:
            assert connection.transport is not None
            connection.transport.write(b"\0" * QUEUED)
            assert connection.transport.get_write_buffer_size() > 0
            connection.transport.close()  # as a Goodbye does: flushed first, then closed
            received = await read_to_the_end(theirs)  # the queue flushes: the transport lets go
            await connection.closed
            connection.close()  # the server's stop, after: once an AttributeError
            return received

    assert asyncio.run(run()) == QUEUED


def test_close_of_a_closing_stream_drops_its_queue_at_once() -> None:
    async def run() -> int:
        connection, theirs = await served_connection()
        with theirs:
            assert connection.transport is not None
            connection.transport.write(b"\0" * QUEUED)
            connection.transport.close()
            connection.close()
            connection.close()  # twice is once
            await connection.closed
            return await read_to_the_end(theirs)

    assert asyncio.run(run()) < QUEUED


def test_close_after_its_loop_is_closed_does_not_raise() -> None:
    loop = asyncio.new_event_loop()
    connection, theirs = loop.run_until_complete(served_connection())
    with theirs:
        loop.close()
        connection.close()  # once a RuntimeError: the loop is closed
