"""The hub's rules as a seat and its bot see them (issue 37: server.match.hub under mutmut): who is
charged what and with which words, when a deadline fires on each clock, what a bot's stream
is sent and when it ends. No network, no process: sessions are the hub's own BotSession, and
a match is a stand-in that notes its charges. Deadlines are short and real; the tests wait
on conditions (a future, a counter), never for a fixed time."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from cardshark.v1 import referee_pb2 as pb
from server.match.hub import INCIDENT_MEMORY, ISSUED_MEMORY, BotHub
from server.match.limits import cap_text
from server.match.sessions import BotIdentity, BotSession, Outbox, PendingRequest, Reply

Charge = tuple[int, str, str, int, str]


class Match:
    """A running match that notes every charge in full."""

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.charged: list[Charge] = []

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        """Note a charge."""
        self.charged.append((seat, kind, detail, request_id, fallback))


class Meter:
    """A managed bot's CPU clock that the test moves by hand."""

    def __init__(self, seconds: float = 10.0) -> None:
        self.seconds = seconds

    def read(self) -> float:
        """CPU seconds so far."""
        return self.seconds


# CPU meters as a bot's cgroup reads them: fresh (nothing used yet), young, and busy.
STARTS = [0.0, 0.5, 10.0]


def bot(name: str) -> BotSession:
    return BotSession(BotIdentity(name, f"{name}-name"))


def metered(start: float = 0.0, cpu_clocks: bool = True) -> tuple[BotHub, Meter, BotSession]:
    """A hub with bot "a" attached, timed by a CPU meter that reads start."""
    hub = BotHub(cpu_clocks)
    meter = Meter(start)
    hub.managed_started("a", meter)
    a = bot("a")
    hub.attach(a)
    return hub, meter, a


def decision(rid: int, action: str = "play:2S", **extra: Any) -> pb.Decision:
    return pb.Decision(request_id=rid, action_id=action, **extra)


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait for a condition the loop's own work makes true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.001)


def drain(outbox: Outbox) -> list[Any]:
    items = []
    while outbox.qsize():
        items.append(outbox._items.popleft())
    return items


# -- decisions: what a reply settles, and what each misuse is charged as --------------------


def test_a_good_reply_settles_its_request_once_and_counts_as_an_answer() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        match = Match("m")
        req = hub.open_request(a, match, 2)
        assert (req.seat, req.match, req.session, req.state) == (2, match, a, "open")
        assert a.oldest_open() is req
        hub.on_decision(a, decision(req.request_id, match_id="m", seat=2))
        assert req.future.result() == Reply("decision", action_id="play:2S")
        assert req.state == "answered" and a.oldest_open() is None
        assert (a.received, a.answered, a.malformed) == (1, 1, 0)
        hub.on_decision(a, decision(req.request_id, "play:" + "x" * 400))
        assert match.charged == [
            (
                2,
                "duplicate",
                f"second reply to request {req.request_id}: {cap_text('play:' + 'x' * 400)!r}",
                req.request_id,
                "",
            )
        ]
        assert (a.received, a.answered) == (2, 1)  # a duplicate is no answer

    run(go)


def test_request_ids_are_new_for_every_request_and_each_answer_is_counted() -> None:
    async def go() -> None:
        hub = BotHub()
        a, b = bot("a"), bot("b")
        hub.attach(a)
        hub.attach(b)
        match = Match("m")
        reqs = [hub.open_request(s, match, i) for i, s in enumerate([a, b, a, b, a])]
        ids = [r.request_id for r in reqs]
        assert len(set(ids)) == 5 and min(ids) > 0 and ids == sorted(ids)
        assert list(a.pending) == [ids[0], ids[2], ids[4]] and list(b.pending) == [ids[1], ids[3]]
        assert a.oldest_open() is reqs[0]
        for req in (reqs[2], reqs[0]):
            hub.on_decision(a, decision(req.request_id))
        assert (a.received, a.answered) == (2, 2) and a.oldest_open() is reqs[4]

    run(go)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"match_id": "other"}, "match 'other' seat -"),
        ({"seat": 3}, "match '' seat 3"),
        ({"match_id": "other", "seat": 0}, "match 'other' seat 0"),
        ({"match_id": "o" * 100}, f"match {cap_text('o' * 100, 64)!r} seat -"),
    ],
)
def test_a_reply_naming_another_match_or_seat_is_not_yours_with_both_named(
    extra: dict[str, Any], named: str
) -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 1)
        hub.on_decision(a, decision(req.request_id, **extra))
        rid = req.request_id
        detail = f"reply to request {rid} names {named}; the request was for match 'm' seat 1"
        assert req.future.result() == Reply("fault", fault_kind="not_yours", detail=detail)
        assert req.state == "answered" and (a.received, a.answered) == (1, 0)

    run(go)


def test_a_reply_naming_its_own_match_and_seat_is_a_decision() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.on_decision(a, decision(req.request_id, "bid:0", match_id="m", seat=0))
        assert req.future.result() == Reply("decision", action_id="bid:0")

    run(go)


def test_an_empty_action_is_malformed() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.on_decision(a, decision(req.request_id, ""))
        assert req.future.result() == Reply(
            "fault", fault_kind="malformed", detail="empty action_id"
        )
        assert (a.received, a.answered) == (1, 0)

    run(go)


def test_a_reply_to_another_bots_request_faults_the_senders_oldest_request() -> None:
    async def go() -> None:
        hub = BotHub()
        a, b = bot("a"), bot("b")
        hub.attach(a)
        hub.attach(b)
        match = Match("m")
        theirs = hub.open_request(a, match, 0)
        oldest = hub.open_request(b, match, 1)
        newer = hub.open_request(b, match, 2)
        hub.on_decision(b, decision(theirs.request_id))
        detail = f"reply to request {theirs.request_id}, which is not this bot's"
        assert oldest.future.result() == Reply("fault", fault_kind="not_yours", detail=detail)
        assert not newer.future.done() and not theirs.future.done()
        assert b.oldest_open() is newer and (b.received, b.answered) == (1, 0)
        assert match.charged == []

    run(go)


def test_a_stray_of_a_seated_bot_is_charged_to_its_first_seat_of_its_first_match() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        first, second = Match("first"), Match("second")
        hub.seat(first, ["x", "a", "y", "a"])
        hub.seat(second, ["a"])
        assert hub.seats_of("a") == {first: [1, 3], second: [0]}
        assert hub.seats_of("nobody") == {}
        hub.on_decision(a, decision(999))
        hub.on_malformed(a, "bad\x00bytes " + "z" * 400)
        assert first.charged == [
            (1, "not_yours", "reply to request 999, which is not this bot's", 0, ""),
            (1, "malformed", cap_text("bad\x00bytes " + "z" * 400), 0, ""),
        ]
        assert second.charged == [] and "a" not in hub.incidents
        assert (a.received, a.answered) == (2, 0)

    run(go)


def test_a_malformed_message_faults_the_oldest_open_request() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.on_malformed(a, "not protobuf")
        assert req.future.result() == Reply("fault", fault_kind="malformed", detail="not protobuf")
        assert a.received == 1

    run(go)


def test_replies_after_the_deadline_or_the_match_are_ignored_and_count_as_answers() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        ended, running = Match("ended"), Match("running")
        hub.seat(ended, ["a"])
        hub.seat(running, ["a"])
        late = hub.open_request(a, ended, 0)
        hub.forget_match(ended)
        assert late.future.cancelled() and a.oldest_open() is None
        assert hub.seats_of("a") == {running: [0]}
        cut = hub.open_request(a, running, 0)
        cut.expire()
        assert cut.future.result() == Reply("timeout") and cut.state == "timed_out"
        hub.on_decision(a, decision(late.request_id))
        hub.on_decision(a, decision(cut.request_id, ""))
        hub.on_decision(a, decision(cut.request_id, "x", match_id="elsewhere"))
        assert ended.charged == [] and running.charged == [] and "a" not in hub.incidents
        assert (a.received, a.answered) == (3, 3)
        cut.resolve(Reply("decision", action_id="x"))  # too late: it stays a timeout
        assert cut.future.result() == Reply("timeout") and cut.state == "timed_out"

    run(go)


def test_late_replies_are_recognised_for_the_last_requests_of_ended_matches_only() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        ended = Match("ended")
        reqs = [hub.open_request(a, ended, 0) for _ in range(ISSUED_MEMORY + 1)]
        hub.forget_match(ended)
        for remembered in (reqs[-1], reqs[1]):  # the newest and the oldest kept
            hub.on_decision(a, decision(remembered.request_id))
        assert "a" not in hub.incidents and (a.received, a.answered) == (2, 2)
        hub.on_decision(a, decision(reqs[0].request_id))  # one too old: a stray
        assert [i.kind for i in hub.incidents["a"]] == ["not_yours"]
        assert ended.charged == []

    run(go)


def test_a_request_settled_first_is_not_cut_off_later() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        req.resolve(Reply("decision", action_id="x"))
        req.expire()
        assert req.state == "answered" and req.future.result().action_id == "x"
        req.resolve(Reply("fault"))
        assert req.future.result().action_id == "x"

    run(go)


def test_forgetting_a_match_keeps_the_bots_other_matches_and_requests() -> None:
    async def go() -> None:
        hub = BotHub()
        a, b = bot("a"), bot("b")
        hub.attach(a)
        hub.attach(b)
        done, going = Match("done"), Match("going")
        hub.seat(done, ["a", "b"])
        hub.seat(going, ["a"])
        old = hub.open_request(b, done, 1)
        answered = hub.open_request(a, done, 0)
        hub.on_decision(a, decision(answered.request_id))
        live = hub.open_request(a, going, 0)
        hub.forget_match(done)
        assert hub.seats_of("a") == {going: [0]} and hub.seats_of("b") == {}
        assert old.future.cancelled() and b.oldest_open() is None
        assert answered.future.result().kind == "decision"
        assert a.oldest_open() is live and not live.future.done()
        hub.on_decision(b, decision(old.request_id))  # b's own, late: nothing charged
        assert "b" not in hub.incidents and done.charged == []
        hub.on_decision(a, decision(old.request_id))  # b's, sent by a: a stray of a's
        assert live.future.result().fault_kind == "not_yours"

    run(go)


def test_a_reconnected_bot_answering_its_old_request_is_not_charged_a_duplicate() -> None:
    async def go() -> None:
        hub = BotHub()
        first = bot("a")
        hub.attach(first)
        match = Match("m")
        req = hub.open_request(first, match, 0)
        first.close()
        second = bot("a")
        assert hub.attach(second)
        assert req.future.result() == Reply("disconnected")
        again = hub.open_request(second, match, 0)  # the referee asks again
        hub.on_decision(second, decision(again.request_id))
        assert again.future.result().kind == "decision"
        hub.on_decision(second, decision(req.request_id))  # its answer to the first
        assert match.charged == []

    run(go)


# -- incidents: misuse no match is charged with ---------------------------------------------


def test_incidents_name_the_matches_and_a_flood_is_logged_sparsely(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        before = time.time()
        for n in range(150):
            hub.on_malformed(a, f"junk {n}")
        kept = hub.incidents["a"]
        assert len(kept) == INCIDENT_MEMORY == 100
        assert [i.detail for i in kept] == [f"junk {n}" for n in range(50, 150)]
        assert {(i.kind, i.matches) for i in kept} == {("malformed", ())}
        assert before <= kept[0].at <= kept[-1].at <= time.time()
        logged = [r.getMessage() for r in caplog.records if r.name == "server.match.hub"]
        counts = [*range(1, 11), 16, 32, 64, 128]
        assert logged == [f"bot a: malformed: junk {c - 1} [incident {c}]" for c in counts]
        assert all(r.levelno == logging.WARNING for r in caplog.records)

    with caplog.at_level(logging.INFO, logger="server.match.hub"):
        run(go)


def test_a_second_stream_is_an_incident_naming_the_peer_and_the_matches(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def go() -> None:
        hub = BotHub()
        live = bot("a")
        assert hub.attach(live)
        m1, m2 = Match("m1"), Match("m2")
        hub.seat(m1, ["a"])
        hub.seat(m2, ["b", "a"])
        assert not hub.attach(bot("a"), "ipv6:[::1]:" + "9" * 100)
        assert not hub.attach(bot("a"))
        first, second = hub.incidents["a"]
        peer = cap_text("ipv6:[::1]:" + "9" * 100, 64)
        assert (first.kind, first.matches) == ("second_stream", ("m1", "m2"))
        assert first.detail == f"a second stream from {peer} was refused: one is live"
        assert second.detail == "a second stream was refused: one is live"
        assert hub.live("a") is live and hub.connected() == [live.identity]
        assert caplog.records[0].getMessage() == (
            f"bot a (seated in match m1, m2): second_stream: {first.detail} [incident 1]"
        )

    with caplog.at_level(logging.WARNING, logger="server.match.hub"):
        run(go)


def test_incidents_are_counted_per_bot() -> None:
    async def go() -> None:
        hub = BotHub()
        a, b = bot("a"), bot("b")
        hub.attach(a)
        hub.attach(b)
        for _ in range(3):
            hub.on_malformed(a, "x")
        hub.on_malformed(b, "y")
        assert [len(hub.incidents[k]) for k in ("a", "b")] == [3, 1]

    run(go)


# -- streams: attach, detach, the session's outbox, Goodbye ---------------------------------


def test_a_bot_that_comes_back_is_live_again_and_its_waiters_wake() -> None:
    async def go() -> None:
        hub = BotHub()
        meter = Meter()
        hub.meters["a"] = meter
        left: list[BotIdentity] = []
        hub.detach_listeners.append(left.append)
        waiting = asyncio.ensure_future(hub.wait_for("a", 5.0))
        await asyncio.sleep(0)
        first = bot("a")
        assert hub.attach(first)
        assert await asyncio.wait_for(waiting, 1.0) is first and first.meter is meter
        req = hub.open_request(first, Match("m"), 0)
        before = time.monotonic()
        hub.detach(first)
        assert req.future.result() == Reply("disconnected") and first.ended.is_set()
        assert left == [first.identity] and hub.live("a") is None and hub.connected() == []
        assert before <= hub.disconnected_at["a"] <= time.monotonic()
        cpu = time.process_time()
        assert await hub.wait_for("a", 0.3) is None
        assert time.process_time() - cpu < 0.05  # it waited, it did not spin
        hub.mark_gone("a", "exited with status 3")
        back = bot("a")
        assert hub.attach(back)
        assert hub.live("a") is back and "a" not in hub.disconnected_at and "a" not in hub.gone
        assert await hub.wait_for("a", 0.01) is back
        hub.detach(first)  # a stale session's teardown leaves the live one alone
        assert hub.live("a") is back and left == [first.identity]

    run(go)


def test_a_closed_stream_is_replaced_by_the_next_one_which_tells_the_listeners() -> None:
    async def go() -> None:
        hub = BotHub()
        left: list[BotIdentity] = []
        hub.detach_listeners.append(left.append)
        first = bot("a")
        hub.attach(first)
        req = hub.open_request(first, Match("m"), 0)
        first.close()
        first.close()
        assert drain(first.outbox) == [None]  # closed once
        first.send(pb.RefereeMessage())
        assert first.outbox.qsize() == 0  # nothing is queued once closed
        second = bot("a")
        assert hub.attach(second)
        assert req.future.result() == Reply("disconnected") and left == [first.identity]
        assert first.ended.is_set() and not second.ended.is_set()

    run(go)


def test_waiting_for_a_bot_whose_process_is_gone_ends_at_once() -> None:
    async def go() -> None:
        hub = BotHub()
        waiting = asyncio.ensure_future(hub.wait_for("a", 30.0))
        await asyncio.sleep(0)
        start = time.monotonic()
        hub.mark_gone("a", "exited")
        assert await asyncio.wait_for(waiting, 5.0) is None
        assert time.monotonic() - start < 5.0 and hub.gone == {"a": "exited"}
        assert await hub.wait_for("a", 30.0) is None

    run(go)


def test_the_outbox_hands_its_reader_every_message_in_order() -> None:
    async def go() -> None:
        session = bot("a")
        got: list[Any] = []

        async def reader() -> None:
            while (item := await session.outbox.get()) is not None:
                got.append(item)

        task = asyncio.ensure_future(reader())
        await asyncio.sleep(0)
        session.send(b"one")
        await asyncio.sleep(0)
        session.send(b"two")
        session.send(b"three")
        session.close()
        await asyncio.wait_for(task, 1.0)
        assert got == [b"one", b"two", b"three"] and session.outbox.qsize() == 0

    run(go)


def test_goodbye_tells_each_connected_bot_once_ends_its_stream_and_waits_for_it() -> None:
    async def go() -> None:
        hub = BotHub()
        a, b, gone = bot("a"), bot("b"), bot("c")
        for s in (a, b, gone):
            hub.attach(s)
        gone.close()

        async def transport(session: BotSession) -> None:
            while await session.outbox.get() is not None:
                pass
            hub.detach(session)

        task = asyncio.ensure_future(transport(a))  # b's transport never ends its stream
        start = time.monotonic()
        told = await hub.farewell(["nobody", "c", "a", "b", "a"], "tournament over")
        assert told == ["a", "b"] and task.done() and a.ended.is_set()
        assert 0.95 <= time.monotonic() - start < 1.8  # waited 1 s for b, then gave up
        goodbye = pb.RefereeMessage(goodbye=pb.Goodbye(reason="tournament over"))
        assert drain(b.outbox) == [goodbye, None]
        assert drain(gone.outbox) == [None]

    run(go)


def test_goodbye_returns_as_soon_as_every_stream_ended() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)

        async def transport() -> None:
            while await a.outbox.get() is not None:
                pass
            hub.detach(a)

        asyncio.ensure_future(transport())
        start = time.monotonic()
        assert await hub.farewell(["a"], "bye", 10.0) == ["a"]
        assert time.monotonic() - start < 5.0
        assert await hub.farewell(["a"], "bye", 10.0) == []  # gone now: nobody to tell

    run(go)


# -- deadlines on each clock ----------------------------------------------------------------


def stall(hub: BotHub, after: float, seconds: float) -> asyncio.Event:
    """Block the referee's own loop for `seconds`, `after` seconds from now (lag that is the
    server's, not the bot's); the event is set once the stall is over."""
    over = asyncio.Event()

    def block() -> None:
        time.sleep(seconds)
        over.set()

    hub.loop.call_later(after, block)
    return over


async def timed(req: PendingRequest) -> float:
    """Seconds from the request's arming until its reply."""
    reply = await asyncio.wait_for(req.future, 10.0)
    assert reply.kind == "timeout"
    return asyncio.get_running_loop().time() - req.opened


def test_a_deadline_fires_on_time_tells_the_listeners_and_stops_the_lag_watch() -> None:
    async def go() -> None:
        hub = BotHub()
        named: list[str] = []
        hub.timeout_listeners.append(named.append)
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.05)
        assert req.limit == 0.05 and req.cpu_open == -1.0 and hub.lag.running
        assert 0.05 <= await timed(req) < 1.0
        assert named == ["a-name"] and a.oldest_open() is None
        await until(lambda: not hub.lag.running)

    run(go)


def test_an_answered_request_never_times_out_and_the_lag_watch_stops_after_it() -> None:
    async def go() -> None:
        hub = BotHub()
        named: list[str] = []
        hub.timeout_listeners.append(named.append)
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.03)
        hub.on_decision(a, decision(req.request_id))
        await until(lambda: not hub.lag.running)  # its deadline came and went
        assert req.future.result().kind == "decision" and named == []

    run(go)


def test_deadlines_armed_latest_first_fire_in_their_own_order() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        match = Match("m")
        reqs = [hub.open_request(a, match, s) for s in range(3)]
        for req, limit in zip(reqs, (0.25, 0.15, 0.05), strict=True):
            hub.arm(req, limit)
        order: list[int] = []

        def note(seat: int) -> Callable[[asyncio.Future[Reply]], None]:
            return lambda _: order.append(seat)

        for req in reqs:
            req.future.add_done_callback(note(req.seat))
        await asyncio.wait_for(asyncio.gather(*(r.future for r in reqs)), 5.0)
        assert order == [2, 1, 0]
        assert all(r.future.result().kind == "timeout" for r in reqs)
        assert [round(r.limit, 2) for r in reqs] == [0.25, 0.15, 0.05]

    run(go)


@pytest.mark.parametrize("sent", ["nothing", "late reply", "reply after its deadline"])
def test_the_servers_own_stall_is_not_charged_to_the_bot(sent: str) -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        ended, match = Match("ended"), Match("m")
        old = hub.open_request(a, ended, 0)
        hub.forget_match(ended)
        cut = hub.open_request(a, match, 1)
        cut.expire()
        earlier = hub.open_request(a, match, 0)
        hub.on_decision(a, decision(earlier.request_id))  # its answers so far: not a flood
        req = hub.open_request(a, match, 0)
        hub.arm(req, 0.1)
        if sent == "late reply":
            hub.on_decision(a, decision(old.request_id))
        elif sent == "reply after its deadline":
            hub.on_decision(a, decision(cut.request_id))
        over = stall(hub, 0.02, 0.3)
        waited = await timed(req)
        assert over.is_set() and hub.extensions >= 1
        assert waited >= 0.38  # its 0.1 s, after the 0.3 s stall
        assert hub.charged_s(req) < 0.25 and match.charged == []

    run(go)


def test_a_bot_that_sends_what_answers_nothing_gets_no_extension_for_a_stall() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        match = Match("m")
        done = hub.open_request(a, match, 1)
        hub.on_decision(a, decision(done.request_id))
        req = hub.open_request(a, match, 0)
        hub.arm(req, 0.1)
        hub.on_decision(a, decision(done.request_id))  # a duplicate: charged, answers nothing
        stall(hub, 0.02, 0.3)
        await timed(req)
        assert hub.extensions == 0 and [c[1] for c in match.charged] == ["duplicate"]

    run(go)


def test_a_stall_never_keeps_a_request_open_past_its_wall_cap() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.05)  # its wall cap: 0.55 s
        stall(hub, 0.01, 0.7)
        waited = await timed(req)
        assert 0.55 <= waited < 1.5 and hub.extensions == 0

    run(go)


def test_wall_time_charged_is_the_time_open_less_the_servers_stall() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        req = hub.open_request(a, Match("m"), 0)
        start = hub.loop.time()
        hub.arm(req, 10.0)
        assert hub.charged_s(req) >= 0.0
        over = stall(hub, 0.01, 0.3)
        await asyncio.wait_for(over.wait(), 5.0)
        await until(lambda: hub.lag.total > 0.2)
        elapsed = hub.loop.time() - start
        charged = hub.charged_s(req)
        assert elapsed >= 0.3 and 0.0 <= charged < elapsed - 0.2

    run(go)


@pytest.mark.parametrize("start", STARTS)
def test_a_managed_bot_is_charged_its_cpu_shared_among_its_open_requests(start: float) -> None:
    async def go() -> None:
        hub, meter, a = metered(start)
        one, two = hub.open_request(a, Match("m1"), 0), hub.open_request(a, Match("m2"), 0)
        hub.arm(one, 10.0)
        hub.arm(two, 10.0)
        assert one.cpu_open == start
        meter.seconds += 0.08
        assert hub.charged_s(one) == pytest.approx(0.04)
        hub.on_decision(a, decision(two.request_id))
        assert hub.charged_s(one) == pytest.approx(0.08)  # alone now
        meter.seconds -= 1.0  # a meter that went back (a new cgroup) charges nothing
        assert hub.charged_s(one) == 0.0

    run(go)


@pytest.mark.parametrize("start", STARTS)
def test_a_managed_bot_times_out_once_its_cpu_is_spent(start: float) -> None:
    async def go() -> None:
        hub, meter, a = metered(start)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.05)
        meter.seconds += 0.05  # exactly its limit: its time is up
        assert await timed(req) < 0.5 and hub.extensions == 0

    run(go)


@pytest.mark.parametrize("start", STARTS)
def test_a_managed_bot_that_has_not_used_its_cpu_waits_up_to_the_wall_cap(start: float) -> None:
    async def go() -> None:
        hub, meter, a = metered(start)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.05)
        meter.seconds += 0.049  # just short of its limit: not yet its time
        await until(lambda: hub.extensions >= 1)
        assert not req.future.done()
        waited = await timed(req)
        assert 0.55 <= waited < 1.5

    run(go)


def test_two_open_requests_share_the_cpu_and_time_out_once_each_share_is_spent() -> None:
    async def go() -> None:
        hub, meter, a = metered()
        one, two = hub.open_request(a, Match("m1"), 0), hub.open_request(a, Match("m2"), 0)
        hub.arm(one, 0.05)
        hub.arm(two, 0.05)
        meter.seconds += 0.08  # 0.04 each: neither has had its 0.05
        await until(lambda: hub.extensions >= 2)
        assert not one.future.done() and not two.future.done()
        meter.seconds += 0.04  # 0.06 each
        assert await timed(one) < 0.45 and await timed(two) < 0.45

    run(go)


def test_with_cpu_clocks_off_a_managed_bot_is_timed_on_the_wall() -> None:
    async def go() -> None:
        hub, meter, a = metered(0.0, cpu_clocks=False)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.05)
        assert req.cpu_open == -1.0
        assert await timed(req) < 0.5  # on its CPU clock it would wait up to 0.55 s

    run(go)


def test_a_managed_bot_is_asked_again_as_soon_as_its_cpu_could_have_run_out() -> None:
    async def go() -> None:
        hub, meter, a = metered()
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.3)  # its wall cap: 0.9 s
        meter.seconds += 0.15  # half its time at its deadline: checked again 0.15 s on
        await until(lambda: hub.extensions >= 1)
        assert hub.extensions == 1 and not req.future.done()
        meter.seconds += 0.2
        assert await timed(req) < 0.65  # at that second check, not at the cap
        assert hub.extensions == 1

    run(go)


def test_with_cpu_clocks_off_a_managed_bot_is_charged_wall_time_and_given_lag() -> None:
    async def go() -> None:
        hub, _, a = metered(0.0, cpu_clocks=False)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.1)
        assert 0.0 <= hub.charged_s(req) < 0.05
        stall(hub, 0.02, 0.3)
        assert await timed(req) >= 0.38 and hub.extensions >= 1

    run(go)


def test_lag_before_a_request_was_armed_is_not_credited_to_it() -> None:
    async def go() -> None:
        hub = BotHub()
        a = bot("a")
        hub.attach(a)
        long = hub.open_request(a, Match("other"), 0)
        hub.arm(long, 30.0)  # keeps the lag watch running
        over = stall(hub, 0.01, 0.3)
        await asyncio.wait_for(over.wait(), 5.0)
        await until(lambda: hub.lag.total > 0.2)
        req = hub.open_request(a, Match("m"), 0)
        hub.arm(req, 0.1)
        assert await timed(req) < 0.35
        assert hub.charged_s(req) >= 0.09

    run(go)


def test_waiting_for_a_bot_under_a_second_still_sees_it_arrive() -> None:
    async def go() -> None:
        hub = BotHub()
        waiting = asyncio.ensure_future(hub.wait_for("a", 0.5))
        await asyncio.sleep(0)
        a = bot("a")
        hub.attach(a)
        assert await asyncio.wait_for(waiting, 5.0) is a

    run(go)


def test_waiting_for_one_bot_while_another_is_connected_does_not_spin() -> None:
    async def go() -> None:
        hub = BotHub()
        hub.attach(bot("b"))
        cpu = time.process_time()
        assert await hub.wait_for("a", 0.3) is None
        assert time.process_time() - cpu < 0.05  # it waited, it did not spin

    run(go)
