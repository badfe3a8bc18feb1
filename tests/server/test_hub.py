"""Routing of decisions to requests, without a network: misuse is charged where it belongs."""

from __future__ import annotations

import asyncio

from cardshark.v1 import referee_pb2 as pb
from server.match.hub import BotHub
from server.match.sessions import BotIdentity, BotSession


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


def test_a_second_stream_of_a_live_bot_is_refused_and_a_dropped_one_is_replaced() -> None:
    async def run() -> None:
        hub = BotHub()
        first = BotSession(BotIdentity("a", "a"))
        assert hub.attach(first)
        req = hub.open_request(first, FakeMatch("m"), 0)
        intruder = BotSession(BotIdentity("a", "a"))
        assert not hub.attach(intruder, "ipv4:10.0.0.9:4242")
        assert hub.live("a") is first and not req.future.done() and not first.closed
        (incident,) = hub.incidents["a"]
        assert incident.kind == "second_stream" and "10.0.0.9" in incident.detail
        first.close()  # its stream ended; the teardown (detach) has not run yet
        back = BotSession(BotIdentity("a", "a"))
        assert hub.attach(back)
        assert req.future.result().kind == "disconnected" and hub.live("a") is back

    asyncio.run(run())


def test_a_stray_reply_without_an_open_request_is_charged_to_the_senders_match() -> None:
    async def run() -> None:
        hub = BotHub()
        a, b = BotSession(BotIdentity("a", "a")), BotSession(BotIdentity("b", "b"))
        hub.attach(a)
        hub.attach(b)
        match, other, ended = FakeMatch("m"), FakeMatch("other"), FakeMatch("ended")
        hub.seat(match, ["a", "b"])
        hub.seat(other, ["c", "b"])
        hub.seat(ended, ["b", "a"])
        a_ended = hub.open_request(a, ended, 1)
        hub.forget_match(ended)
        victim = hub.open_request(a, match, 0)
        elsewhere = hub.open_request(a, other, 0)
        hub.on_decision(b, decision(victim.request_id))  # another bot's, same match
        hub.on_decision(b, decision(elsewhere.request_id))  # another bot's, another match
        hub.on_decision(b, decision(a_ended.request_id))  # another bot's, a finished match
        hub.on_decision(b, decision(10**6))  # never issued
        assert match.charged == [(1, "not_yours")] * 4 and other.charged == []
        assert not victim.future.done() and not elsewhere.future.done()
        hub.on_decision(a, decision(victim.request_id))
        assert victim.future.result().kind == "decision"
        assert hub.seats_of("b") == {match: [1], other: [1]} and "b" not in hub.incidents

    asyncio.run(run())


def test_a_stray_reply_of_a_bot_in_no_match_is_an_incident() -> None:
    async def run() -> None:
        hub = BotHub()
        a, b = BotSession(BotIdentity("a", "a")), BotSession(BotIdentity("b", "b"))
        hub.attach(a)
        hub.attach(b)
        match = FakeMatch("m")
        hub.seat(match, ["a", "a", "a"])
        theirs = hub.open_request(a, match, 2)
        hub.on_decision(b, decision(theirs.request_id))
        hub.on_malformed(b, "x" * 10_000)
        assert [i.kind for i in hub.incidents["b"]] == ["not_yours", "malformed"]
        assert len(hub.incidents["b"][1].detail.encode()) < 300
        assert match.charged == [] and not theirs.future.done()

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
        assert (await slow.future).kind == "timeout" and slow.state == "timed_out"
        assert answered.future.result().kind == "decision" and not later.future.done()
        hub.on_decision(bot, decision(slow.request_id))  # cut off: ignored, not charged
        assert match.charged == []
        assert (await later.future).kind == "timeout"

    asyncio.run(run())


def test_a_bot_in_several_matches_shares_its_cpu_among_its_open_requests() -> None:
    from server.match.hub import cpu_share

    assert cpu_share(0.06, 1) == 0.06  # alone: all of it is this request's
    assert cpu_share(0.06, 3) == 0.02  # three open at once: a third each
    assert cpu_share(0.06, 0) == 0.06  # never divides by zero
