"""Bounded input and one live stream per bot, over real gRPC on real sockets, real bot processes."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

import server.transport.grpc_server
import server.transport.service
from cardshark.v1 import referee_pb2 as pb
from server.match.limits import cap_text, server_options
from server.match.records import ClockSettings
from server.play.arena import Arena
from server.transport.service import RefereeService
from tests.server.conftest import HOSTILE_BOT, RANDOM_BOT

CLOCK = ClockSettings(move_ms=1000, bank_ms=0, fault_limit=3, grace_s=1.5, no_show_s=20)


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a condition of the server's state, failing after timeout seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


class RawBot:
    """A stream to the referee driven by the test: it sends only what it is told to."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        play = channel.stream_stream(
            "/cardshark.v1.Referee/Play",
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.call: Any = play(self._outgoing())

    async def _outgoing(self) -> AsyncIterator[pb.BotMessage]:
        while (msg := await self.outbox.get()) is not None:
            yield msg

    def hello(self, token: str) -> None:
        """Say Hello with token."""
        self.outbox.put_nowait(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1)))

    async def refusal(self, timeout: float = 10.0) -> grpc.StatusCode:
        """The status the server ends this stream with (it must send nothing before)."""
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async with asyncio.timeout(timeout):
                async for msg in self.call:
                    pytest.fail(f"the server sent {msg.WhichOneof('kind')}")
        return err.value.code()


def test_a_second_stream_with_a_live_bots_token_is_refused_and_the_bot_plays_on(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        async with Arena(log_dir=tmp_path) as arena:
            assert arena.running is not None
            hub = arena.running.hub
            tokens = {name: arena.register(name) for name in ("live", "b", "c")}
            for name, token in tokens.items():
                await arena.spawn(name, RANDOM_BOT, token)
            live = await hub.wait_for("live", 30)
            bots = [arena.identity(t) for t in tokens.values()]
            match = asyncio.create_task(
                arena.play("knaves", bots, seed=3, clock=CLOCK, match_id="m1")
            )
            await until(lambda: bool(hub.seats_of("live")))
            async with grpc.aio.insecure_channel(arena.address) as channel:
                intruder = RawBot(channel)
                intruder.hello(tokens["live"])
                assert await intruder.refusal() == grpc.StatusCode.ALREADY_EXISTS
                intruder.outbox.put_nowait(None)
            assert not match.done(), "the match ended before the intrusion"
            assert hub.live("live") is live
            record = await match
            assert record.status == "finished" and len(record.actions) > 100
            assert record.faults == [] and record.forfeited == [False] * 3
            (incident,) = hub.incidents["live"]
            assert incident.kind == "second_stream" and incident.matches == ("m1",)

    asyncio.run(run())


def test_a_connection_that_never_speaks_is_closed_at_the_handshake_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        server.transport.grpc_server, "SERVER_OPTIONS", server_options(handshake_timeout_ms=1000)
    )

    async def run() -> float:
        async with Arena(log_dir=tmp_path) as arena:
            host, port = arena.address.rsplit(":", 1)
            reader, writer = await asyncio.open_connection(host, int(port))
            start = asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(15):
                    await reader.read()  # to EOF: the server closed the connection
            except ConnectionResetError:
                pass
            writer.close()
            return asyncio.get_running_loop().time() - start

    assert asyncio.run(run()) < 5


def test_a_stream_without_hello_is_closed_at_the_hello_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.transport.service, "HELLO_TIMEOUT_S", 1.0)

    async def run() -> float:
        async with (
            Arena(log_dir=tmp_path) as arena,
            grpc.aio.insecure_channel(arena.address) as channel,
        ):
            silent = RawBot(channel)
            start = asyncio.get_running_loop().time()
            assert await silent.refusal(15) == grpc.StatusCode.DEADLINE_EXCEEDED
            return asyncio.get_running_loop().time() - start

    assert asyncio.run(run()) < 5


def test_streams_waiting_for_hello_are_capped_and_the_cap_frees_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[RefereeService] = []

    class Recorded(RefereeService):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(server.transport.grpc_server, "RefereeService", Recorded)
    monkeypatch.setattr(server.transport.service, "MAX_UNAUTHENTICATED", 3)

    async def run() -> None:
        async with Arena(log_dir=tmp_path) as arena:
            token = arena.register("late")
            (service,) = made
            async with grpc.aio.insecure_channel(arena.address) as channel:
                waiting = [RawBot(channel) for _ in range(3)]
                await until(lambda: service.unauthenticated == 3)
                extra = RawBot(channel)
                assert await extra.refusal() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert service.unauthenticated == 3
                for stream in waiting:
                    stream.call.cancel()
                await until(lambda: service.unauthenticated == 0)
                bot = RawBot(channel)
                bot.hello(token)
                first = await bot.call.read()
                assert first.WhichOneof("kind") == "welcome"
                bot.outbox.put_nowait(None)

    asyncio.run(run())


def test_a_megabyte_action_id_is_stored_capped(tmp_path: Path) -> None:
    async def run() -> dict[str, Any]:
        async with Arena(log_dir=tmp_path) as arena:
            bots = []
            for seat, name in enumerate(["huge", "b", "c"]):
                token = arena.register(name)
                command = [*HOSTILE_BOT, "huge", "1"] if seat == 0 else RANDOM_BOT
                await arena.spawn(name, command, token)
                bots.append(arena.identity(token))
            record = await arena.play("knaves", bots, seed=4, clock=CLOCK)
            assert record.status == "finished", record.reason
            return record.to_json()  # what the store keeps and the transcript shows

    stored = asyncio.run(run())
    (fault,) = stored["faults"]
    given = "é" + "x" * 999_999
    shown = cap_text(given)
    assert shown == "é" + "x" * 254 + f"…(+{len(given.encode()) - 256} bytes)"
    assert fault["kind"] == "unknown_action" and f"{shown!r}" in fault["detail"]
    assert len(fault["detail"].encode()) < 256 + 100


def test_stray_replies_are_charged_to_the_sender_and_the_victims_are_untouched(
    tmp_path: Path,
) -> None:
    logs = {name: tmp_path / f"{name}.requests" for name in ("informer", "mate", "victim")}
    strays = tmp_path / "strays.sent"

    def hostile(mode: str, bad: int, log: Path | None = None, *extra: str) -> list[str]:
        return [*HOSTILE_BOT, mode, str(bad), "any", str(log or ""), *extra]

    sources = ",".join(str(logs[n]) for n in ("informer", "mate", "victim"))
    commands = {
        # A finished match first: the informer's requests are another bot's, of a match over.
        "informer": hostile("sleepy", 0, logs["informer"]),
        # Then two at once: the stray bot, beside the mate, answers the mate's latest request
        # (same match) and the victim's (another match, held open 3.6 s by its slow answers).
        # The stray bot holds an answer (up to 0.6 s) until the next log has a request in it.
        "stray": hostile("stray", 1000, None, f"from={sources}", f"strays={strays}"),
        "mate": hostile("sleepy", 0, logs["mate"]),
        "victim": hostile("sleepy", 8, logs["victim"]),
    }

    async def run() -> list[Any]:
        async with Arena(log_dir=tmp_path) as arena:
            ids = {}
            for name in ("informer", "stray", "mate", "victim", "a", "b", "c", "d"):
                token = arena.register(name)
                await arena.spawn(name, commands.get(name, RANDOM_BOT), token)
                ids[name] = arena.identity(token)

            def table(*names: str) -> list[Any]:
                return [ids[n] for n in names]

            clock = dataclasses.replace(CLOCK, fault_limit=10)
            done = await arena.play("knaves", table("informer", "a", "b"), 1, clock=clock)
            other = asyncio.create_task(
                arena.play("knaves", table("victim", "c", "d"), 2, clock=clock)
            )
            mine = await arena.play("knaves", table("stray", "mate", "a"), 3, clock=clock)
            return [done, await other, mine]

    done, other, mine = asyncio.run(run())
    assert [r.status for r in (done, other, mine)] == ["finished"] * 3
    sent = [int(line) for line in strays.read_text().split()]
    assert len(sent) == 3, "the stray bot did not find a request of each kind"
    assert done.faults == [] and other.faults == [], "a victim was charged"
    assert not mine.faults_of(1) and not mine.faults_of(2)
    charged = mine.faults_of(0)
    strays_charged = [f for f in charged if f.kind == "not_yours"]
    for rid, fault in zip(sent, strays_charged, strict=True):
        assert f"request {rid}," in fault.detail
    # A stray that arrives while the sender has a request open settles that request as the
    # fault (it may have been meant as its answer); the real answer after it is a duplicate.
    settled = {f.request_id for f in strays_charged if f.request_id}
    assert all(f in strays_charged or f.request_id in settled for f in charged), charged
    assert not any(mine.forfeited)


def test_cap_text_counts_utf8_bytes_and_never_splits_a_character() -> None:
    assert cap_text("short") == "short"
    assert cap_text("x" * 256) == "x" * 256
    assert cap_text("x" * 257) == "x" * 256 + "…(+1 bytes)"
    assert cap_text("€" * 100, 10) == "€" * 3 + "…(+291 bytes)"  # 3 bytes each: 9 fit in 10
    assert cap_text("é" * 200) == "é" * 128 + "…(+144 bytes)"
