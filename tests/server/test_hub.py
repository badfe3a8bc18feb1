"""Routing of decisions to requests, without a network: misuse is charged where it belongs."""

from __future__ import annotations

import asyncio

from cardshark.v1 import referee_pb2 as pb
from server.hub import BotHub, BotIdentity, BotSession


class FakeMatch:
    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.charged: list[tuple[int, str]] = []

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        self.charged.append((seat, kind))


def decision(rid: int, action: str = "play:2S") -> pb.Decision:
    return pb.Decision(request_id=rid, action_id=action)


def test_late_reply_to_an_ended_match_is_not_charged_to_another_match() -> None:
    async def run() -> None:
        hub = BotHub()
        bot = BotSession(BotIdentity("b", "b"))
        hub.attach(bot)
        ended, running = FakeMatch("ended"), FakeMatch("running")
        old = hub.open_request(bot, ended, 0)
        hub.forget_match(ended)
        live = hub.open_request(bot, running, 1)
        hub.on_decision(bot, decision(old.request_id))
        assert not live.future.done() and running.charged == [] and ended.charged == []
        hub.on_decision(bot, decision(live.request_id))
        assert live.future.result().action_id == "play:2S"

    asyncio.run(run())


def test_reply_to_another_bots_request_is_not_yours_and_duplicates_are_charged() -> None:
    async def run() -> None:
        hub = BotHub()
        a, b = BotSession(BotIdentity("a", "a")), BotSession(BotIdentity("b", "b"))
        hub.attach(a)
        hub.attach(b)
        match = FakeMatch("m")
        theirs = hub.open_request(a, match, 0)
        mine = hub.open_request(b, match, 1)
        hub.on_decision(b, decision(theirs.request_id))
        reply = mine.future.result()
        assert (reply.kind, reply.fault_kind) == ("fault", "not_yours")
        assert not theirs.future.done()
        hub.on_decision(a, decision(theirs.request_id))
        hub.on_decision(a, decision(theirs.request_id))
        assert match.charged == [(0, "duplicate")]

    asyncio.run(run())


def test_disconnect_settles_open_requests_and_a_new_stream_replaces_the_old() -> None:
    async def run() -> None:
        hub = BotHub()
        first = BotSession(BotIdentity("a", "a"))
        hub.attach(first)
        req = hub.open_request(first, FakeMatch("m"), 0)
        second = BotSession(BotIdentity("a", "a"))
        hub.attach(second)
        assert req.future.result().kind == "disconnected"
        assert first.closed and hub.live("a") is second

    asyncio.run(run())


def test_armed_requests_expire_at_their_own_deadlines_and_answered_ones_never() -> None:
    async def run() -> None:
        hub = BotHub()
        bot = BotSession(BotIdentity("b", "b"))
        hub.attach(bot)
        match = FakeMatch("m")
        slow, answered, later = (hub.open_request(bot, match, s) for s in range(3))
        hub.arm(later, 0.30)
        hub.arm(slow, 0.05)  # earlier than the timer already set: must fire first
        hub.arm(answered, 0.05)
        hub.on_decision(bot, decision(answered.request_id))
        await asyncio.sleep(0.15)
        assert slow.future.result().kind == "timeout" and slow.state == "timed_out"
        assert answered.future.result().kind == "decision" and not later.future.done()
        hub.on_decision(bot, decision(slow.request_id))  # cut off: ignored, not charged
        assert match.charged == []
        assert (await later.future).kind == "timeout"

    asyncio.run(run())
