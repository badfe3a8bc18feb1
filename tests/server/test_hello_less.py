"""Connections that never say Hello are closed soon, whatever calls they open, and capped.

A real server (server.play.arena.Arena, in this process, so its descriptors are this process's)
on 127.0.0.1; real bot processes play over TCP and the Unix socket while a process of 200
Hello-less gRPC connections, each its own TCP connection, opens a Play stream on each every
5 s. Time is read, never slept on: every wait polls the server's state with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import server.transport.grpc_server
import server.transport.service
from server.match.limits import MAX_CONNECTION_AGE_MS, server_options
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena
from server.transport.connections import ConnectionGuard, Refused, address_of
from tests.server.conftest import RANDOM_BOT
from tests.server.test_bounds import RawBot
from tests.server.test_goodbye import start_remote

FLOOD = [sys.executable, str(Path(__file__).parent / "bots" / "hello_less.py")]
PEERS = 200  # Hello-less connections
PERIOD_S = 5.0  # each opens a Play stream this often
ROUNDS = 3  # at 0, 5 and 10 s; then quiet
CLOSED_BY_S = 12.0  # every flood connection is closed this long after it opened
QUIET_S = 12.0  # and the server's descriptors are back this long after the flood went quiet
# A match in progress may hold a descriptor or two that the baseline did not (a pipe of the
# event loop's, a log being written): the count may be that much over, never a connection.
SLACK = 3
CLOCK = ClockSettings(move_ms=1000, bank_ms=0, fault_limit=3, grace_s=1.5, no_show_s=20)


def descriptors() -> int:
    """How many descriptors this process (the server) holds."""
    return len(os.listdir("/proc/self/fd"))


def tcp_connections(port: int) -> set[tuple[int, int]]:
    """(socket inode, peer port) of each TCP connection to port this process holds."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            held.add(int(link[8:-1]))
    found = set()
    for name in ("tcp", "tcp6"):  # gRPC's sockets are IPv6 ones, with v4-mapped addresses
        with open(f"/proc/self/net/{name}") as table:
            next(table)
            for line in table:
                fields = line.split()
                local, remote, state, inode = fields[1], fields[2], fields[3], int(fields[9])
                if state != "0A" and inode in held and int(local.split(":")[1], 16) == port:
                    found.add((inode, int(remote.split(":")[1], 16)))
    return found


async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll condition until it holds, failing with what after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        await asyncio.sleep(0.05)


def test_200_hello_less_connections_are_closed_by_12_s_and_honest_play_goes_on(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        async with Arena(log_dir=tmp_path, transport="grpc") as arena:
            assert arena.running is not None and arena.running.guard is not None
            hub, guard, port = arena.running.hub, arena.running.guard, arena.running.port
            tokens = {name: arena.register(name) for name in ("remote", "unix1", "unix2")}
            remote = await start_remote(arena.address, tokens["remote"])  # over TCP
            for name in ("unix1", "unix2"):  # managed: over the Unix socket
                await arena.spawn(name, RANDOM_BOT, tokens[name])
            for name in tokens:
                assert await hub.wait_for(name, 30) is not None, f"{name} did not connect"
            bots = [arena.identity(t) for t in tokens.values()]
            records: list[MatchRecord] = []
            stop = asyncio.Event()

            async def play() -> None:
                seed = 0
                while not stop.is_set():
                    seed += 1
                    records.append(await arena.play("knaves", bots, seed, clock=CLOCK))

            player = asyncio.create_task(play())
            await until(lambda: len(records) >= 1, 30, "a first match")
            honest = tcp_connections(port)  # the remote bot's one connection
            assert len(honest) == 1, honest
            flood = await asyncio.create_subprocess_exec(
                *FLOOD,
                arena.address,
                str(PEERS),
                str(PERIOD_S),
                str(ROUNDS),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=(tmp_path / "flood.stderr").open("wb"),
            )
            try:
                assert flood.stdin is not None and flood.stdout is not None
                assert await flood.stdout.readline() == b"ready\n"
                baseline = descriptors()  # the flood's pipes counted, none of its connections
                seen: dict[tuple[int, int], list[float]] = {}  # first and last time seen
                most_pending = 0

                async def watch() -> None:
                    nonlocal most_pending
                    while True:
                        now = time.monotonic()
                        for conn in tcp_connections(port) - honest:
                            seen.setdefault(conn, [now, now])[1] = now
                        most_pending = max(most_pending, guard.pending.get("127.0.0.1", 0))
                        await asyncio.sleep(0.05)

                watcher = asyncio.create_task(watch())
                played_before = len(records)
                flood.stdin.write(b"go\n")
                await until(lambda: len(seen) >= PEERS, 10, f"{PEERS} connections")
                assert await flood.stdout.readline() == b"quiet\n"
                quiet = time.monotonic()
                ended = json.loads(await asyncio.wait_for(flood.stdout.readline(), 2 * QUIET_S))
                await until(
                    lambda: tcp_connections(port) <= honest and descriptors() <= baseline + SLACK,
                    quiet + QUIET_S - time.monotonic(),
                    "the server's descriptors back to the baseline",
                )
                back = time.monotonic() - quiet
                # The remote bot is still on its first connection: past that connection's
                # GOAWAY (9 s) its stream, which said Hello, was never cut.
                assert tcp_connections(port) == honest
                watcher.cancel()
                stop.set()
                await player
            finally:
                if flood.returncode is None:
                    flood.kill()
                await flood.wait()
                remote.terminate()
                await remote.wait()

            lifetimes = sorted(last - first for first, last in seen.values())
            print(
                f"{len(seen)} flood connections, longest {lifetimes[-1]:.1f} s; descriptors "
                f"back {back:.1f} s after quiet; streams ended {ended}; at most {most_pending} "
                f"waiting from one address; {len(records) - played_before} matches meanwhile"
            )
            assert lifetimes[-1] <= CLOSED_BY_S, lifetimes[-10:]
            assert sum(ended.values()) == PEERS * ROUNDS
            assert "message" not in ended and "OK" not in ended, ended
            assert ended["RESOURCE_EXHAUSTED"] > 0 and ended["DEADLINE_EXCEEDED"] > 0, ended
            assert 0 < most_pending <= guard.max_per_address
            assert len(records) - played_before >= 3
            for record in records:
                assert record.status == "finished", record.reason
                assert record.faults == [] and not any(record.forfeited)

    asyncio.run(run())


def test_every_call_of_a_connection_ends_at_its_hello_deadline_and_then_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.transport.service, "HELLO_TIMEOUT_S", 2.0)
    later_s = 1.2  # when the later calls open: a stream timed alone would end at 3.2 s

    async def run() -> tuple[list[float], float]:
        async with (
            Arena(log_dir=tmp_path) as arena,
            grpc.aio.insecure_channel(arena.address) as channel,
        ):
            assert arena.running is not None
            loop = asyncio.get_running_loop()
            start = loop.time()
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
            await until(lambda: loop.time() - start > later_s, 5, "the later calls' time")
            requests: asyncio.Queue[Any] = asyncio.Queue()

            async def outgoing() -> Any:
                while (msg := await requests.get()) is not None:
                    yield msg

            reflect = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                outgoing()
            )
            requests.put_nowait(reflection_pb2.ServerReflectionRequest(list_services=""))
            assert (await reflect.read()).list_services_response.service
            play = RawBot(channel)  # a Play stream that never says Hello
            ends = []
            async with asyncio.timeout(10):
                for call in (watch, reflect, play.call):
                    assert await call.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                    ends.append(loop.time() - start)
            requests.put_nowait(None)
            play.outbox.put_nowait(None)
            await until(lambda: not tcp_connections(arena.running.port), 5, "the close")
            return ends, loop.time() - start

    ends, closed = asyncio.run(run())
    assert all(1.9 < end < 2.8 for end in ends), ends
    # Idle for 1 s after its last call: GOAWAY. The bound leaves a loaded machine its slack and
    # still tells the idle rule from the 9 s age limit, the next thing that would close it.
    assert closed < MAX_CONNECTION_AGE_MS / 1000 - 3, closed


def test_connections_on_a_port_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No connection ages or idles out while the test looks, however slow the machine is.
    options = server_options(
        max_connections=4, max_connection_idle_ms=600_000, max_connection_age_ms=600_000
    )
    monkeypatch.setattr(server.transport.grpc_server, "SERVER_OPTIONS", options)

    async def run() -> list[bool]:
        async with Arena(log_dir=tmp_path) as arena:
            # A refused channel retries at most 0.5 s apart (gRPC's backoff would otherwise
            # grow past the wait below: the CI run that found it waited 10 s in vain).
            local = [
                ("grpc.use_local_subchannel_pool", 1),
                ("grpc.initial_reconnect_backoff_ms", 100),
                ("grpc.min_reconnect_backoff_ms", 100),
                ("grpc.max_reconnect_backoff_ms", 500),
            ]
            channels = [grpc.aio.insecure_channel(arena.address, options=local) for _ in range(6)]
            ready = []
            for n, channel in enumerate(channels):
                try:
                    # The first four must get in (on a loaded CI machine that can take more
                    # than a second); the other two must still be out after a second.
                    await asyncio.wait_for(channel.channel_ready(), 30.0 if n < 4 else 1.0)
                    ready.append(True)
                except TimeoutError:
                    ready.append(False)
            await channels[0].close()  # frees a place: one of the waiting channels gets it
            waits = [asyncio.ensure_future(c.channel_ready()) for c in channels[4:]]
            done, pending = await asyncio.wait(waits, timeout=30, return_when="FIRST_COMPLETED")
            for wait in pending:
                wait.cancel()
            assert done, "no waiting channel got the freed place"
            for channel in channels[1:]:
                await channel.close()
            return ready

    assert asyncio.run(run()) == [True] * 4 + [False] * 2


def test_the_guard_caps_hello_less_connections_per_address_and_in_all() -> None:
    async def run() -> None:
        guard = ConnectionGuard(10.0, max_per_address=2, max_pending=5)

        def refusal(peer: str) -> str:
            with pytest.raises(Refused) as refused:
                guard.enter(peer)
            assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            return "address" if "your address" in refused.value.message else "all"

        a1, a2 = guard.enter("ipv4:10.0.0.1:1001"), guard.enter("ipv4:10.0.0.1:1002")
        assert guard.enter("ipv4:10.0.0.1:1001") is a1  # a second call: the same connection
        assert refusal("ipv4:10.0.0.1:1003") == "address"
        b1, b2 = guard.enter("ipv6:[2001:db8::1]:1"), guard.enter("ipv6:[2001:db8::ffff]:1")
        assert refusal("ipv6:[2001:db8::2:3]:1") == "address"  # one /64 is one address
        c1 = guard.enter("ipv4:10.0.0.9:1")
        assert refusal("ipv4:10.0.0.10:1") == "all"
        guard.authenticate(a2)  # said Hello: counted no longer, timed no longer
        assert a2.deadline is None and a1.deadline is not None
        a3 = guard.enter("ipv4:10.0.0.1:1003")
        for conn in (a1, a1, a2, a3, b1, b2, c1):
            guard.leave(conn)
        assert guard.pending_total == 0
        # A Unix socket's peers name no connection: each call is timed alone, never counted.
        assert all(guard.enter("unix:").address is None for _ in range(9))
        assert guard.pending_total == 0
        late = ConnectionGuard(0.0)  # a connection past its deadline may open nothing
        with pytest.raises(Refused) as refused:
            late.enter("ipv4:10.0.0.1:1")
        assert refused.value.code == grpc.StatusCode.DEADLINE_EXCEEDED

    asyncio.run(run())
    assert address_of("ipv4:127.0.0.1:5") == "127.0.0.1"
    assert address_of("ipv6:[::ffff:1.2.3.4]:5") == "1.2.3.4"
    assert address_of("ipv6:[2001:db8::7]:5") == "2001:db8::/64"
    assert address_of("unix:") is None and address_of("unix:/run/x.sock") is None
