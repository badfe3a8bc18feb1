"""The referee's rules as each seat's bot and the record see them (issue 37: server.match.runner
under mutmut; issue 32 item 5: MatchRunner driven by scripted in-process replies on a
controllable clock). The bots are test_seams' WireBot, answering through the wire bytes as
a script says (an action, after so long; garbage; silence; a hang-up); time is virtual
(tests/server/virtual_time.py), so every move time, bank and deadline below is exact and a
timeout costs no real time. No process is started."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from cardshark.v1 import referee_pb2 as pb
from games.base import Action, Game, MatchState
from games.registry import get_game
from server.codec import protocol
from server.match.hub import BotHub
from server.match.limits import cap_text
from server.match.live import LiveMatch, LiveMatches
from server.match.records import ClockSettings, Fault, FaultKind, MatchRecord
from server.match.runner import MatchRunner, fallback_index
from server.match.sessions import BotIdentity, Outgoing
from tests.server.test_hub_rules import Meter, until
from tests.server.test_seams import WireBot
from tests.server.virtual_time import VirtualClock, run_virtual

SEED = 11
NAMES = ["bot0", "bot1", "bot2"]
CLOCK = ClockSettings(move_ms=1000)


@dataclass
class Move:
    """How a scripted bot answers one request."""

    action: str = ""  # "" for the first legal action
    think_s: float = 0.0  # virtual seconds before the answer
    cpu_s: float = 0.0  # CPU seconds the bot's meter moves by while it thinks
    raw: bytes | None = None  # these bytes instead of a Decision
    silent: bool = False  # no answer at all
    hang_up: bool = False  # the stream drops instead of an answer
    back_after_s: float | None = None  # after a hang-up: a new stream this much later
    named: bool = False  # the Decision names its match and seat
    twice: bool = False  # the Decision is sent twice


Script = Callable[[pb.DecisionRequest], Move]


def first(request: pb.DecisionRequest) -> Move:
    return Move()


@dataclass(eq=False)
class Bot(WireBot):
    """A WireBot answering as its script says, noting when (virtual time) each message came."""

    script: Script = first
    times: list[float] = field(default_factory=list)

    def send(self, msg: Outgoing) -> None:
        """Read the message; answer a request as the script says."""
        got = self.receive(msg)
        assert self.hub is not None
        self.times.append(self.hub.loop.time())
        if got.WhichOneof("kind") != "request" or self.closed:
            return
        request = got.request
        self.requests.append(request)
        move = self.script(request)
        if move.hang_up:
            self.closed = True
            self.hub.loop.call_soon(self.hub.detach, self)
            if move.back_after_s is not None:
                again = dataclasses.replace(
                    self, closed=False, pending={}, received=0, answered=0, malformed=0
                )
                again.ended = asyncio.Event()
                self.hub.loop.call_later(move.back_after_s, self.hub.attach, again)
            return
        if move.silent:
            return
        if move.cpu_s and isinstance(self.meter, Meter):
            meter = self.meter
            self.hub.loop.call_later(
                move.think_s, setattr, meter, "seconds", meter.seconds + move.cpu_s
            )
        action = move.action or request.legal_actions[0].id
        data = move.raw
        if data is None:
            decision = pb.Decision(request_id=request.request_id, action_id=action)
            if move.named:
                decision.match_id, decision.seat = request.match_id, request.seat
            data = pb.BotMessage(decision=decision).SerializeToString()
        self.reply(data, move.think_s)
        if move.twice:
            self.reply(data, move.think_s)


def thinking(seconds: float) -> Script:
    return lambda request: Move(think_s=seconds)


def connect(hub: BotHub, scripts: list[Script], names: list[str] = NAMES) -> list[Bot]:
    bots = []
    for seat, script in enumerate(scripts):
        bot = Bot(BotIdentity(f"b{seat}", names[seat]), hub=hub, script=script)
        assert hub.attach(bot)
        bots.append(bot)
    return bots


def runner(
    hub: BotHub,
    identities: list[BotIdentity],
    clock: ClockSettings,
    game: Game[Any] | None = None,
    live: LiveMatches | None = None,
) -> MatchRunner:
    return MatchRunner(
        hub,
        game or get_game("knaves"),
        "m1",
        SEED,
        identities,
        clock=clock,
        live=live or LiveMatches(),
    )


def knaves(
    scripts: list[Script],
    monkeypatch: pytest.MonkeyPatch,
    clock: ClockSettings = CLOCK,
) -> tuple[MatchRecord, list[Bot], float]:
    """A Knaves match of three scripted bots: its record, the bots, and its virtual length."""

    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], float]:
        hub = BotHub()
        bots = connect(hub, scripts)
        start = time.now
        record = await runner(hub, [b.identity for b in bots], clock).run()
        return record, bots, time.now - start

    return run_virtual(go, monkeypatch)


def kinds(bot: Bot) -> list[str | None]:
    return [m.WhichOneof("kind") for m in bot.inbox]


def of_kind(bot: Bot, kind: str) -> list[Any]:
    return [getattr(m, kind) for m in bot.inbox if m.WhichOneof("kind") == kind]


def replayed_scores(record: MatchRecord) -> list[int]:
    game = get_game(record.game)
    state = game.replay(record.seed, len(record.seats), record.options, record.actions)
    return list(game.result(state).scores)


# -- the fallback: a function of seed and position only -----------------------------------


@pytest.mark.parametrize(
    ("seed", "decision", "choices", "index"),
    [(0, 0, 7, 2), (11, 3, 13, 11), (11, 4, 13, 12), (123456789, 50, 52, 7), (5, 0, 1, 0)],
)
def test_the_fallback_index_is_pinned(seed: int, decision: int, choices: int, index: int) -> None:
    # blake2b-64 of "seed:decision", big-endian, modulo the choices: a replay depends on it.
    assert fallback_index(seed, decision, choices) == index


# -- a clean match: what every bot is told, and the record ---------------------------------


def choosing(seed: int, think_s: float) -> Script:
    """A bot choosing at random (seeded) after think_s seconds."""
    rng = random.Random(seed)
    return lambda request: Move(rng.choice(request.legal_actions).id, think_s)


@pytest.mark.parametrize(
    ("name", "options", "seats"),
    [("knaves", None, 3), ("kansas-city", {"hands": 2, "numbers_public": False}, 5)],
)
def test_a_clean_match_tells_each_bot_exactly_what_the_engine_says_and_when(
    name: str, options: dict[str, Any] | None, seats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = get_game(name)  # Kansas City's 5 seats: not its default 4
    names = [f"bot{seat}" for seat in range(seats)]
    thinks = [0.25, 0.5, 0.125, 0.0625, 0.375][:seats]
    clock = ClockSettings(move_ms=1000, bank_ms=700)

    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], float]:
        hub = BotHub()
        bots = connect(hub, [choosing(s, think) for s, think in enumerate(thinks)], names)
        start = time.now
        match = MatchRunner(
            hub, game, "m1", SEED, [b.identity for b in bots], options, clock, LiveMatches()
        )
        return await match.run(), bots, time.now - start

    record, bots, length = run_virtual(go, monkeypatch)
    resolved = game.spec.resolve(options)
    assert record.status == "finished" and record.reason == "" and record.faults == []
    assert (record.game, record.seed, record.seats, record.match_id) == (name, SEED, names, "m1")
    assert record.options == dict(resolved) and (options is None or record.options != {})
    assert record.scores == replayed_scores(record)
    assert record.forfeited == [False] * seats
    assert record.ranks == [1 + sum(o > s for o in record.scores) for s in record.scores]
    # What each bot must have read, in order, rebuilt from a replay of the record.
    state = game.new_match(SEED, seats, resolved)
    expected: list[list[pb.RefereeMessage]] = [
        [
            protocol.match_started(
                match_id="m1",
                game_name=name,
                options=resolved,
                seat=seat,
                names=names,
                move_ms=1000,
                bank_ms=700,
            )
        ]
        for seat in range(seats)
    ]
    asked = [iter(b.requests) for b in bots]
    hands = second_of_two = 0  # decisions of two legal actions answered with the second
    for index, action in enumerate(record.actions):
        seat = game.to_act(state)
        assert seat is not None
        assert record.move_ms[index] == thinks[seat] * 1000  # exact: virtual time
        legal = game.legal_actions(state)
        request = protocol.decision_request(
            game_name=name,
            request_id=next(asked[seat]).request_id,
            match_id="m1",
            seat=seat,
            view=game.view(state, seat),
            actions=legal,
            move_ms=1000,
            bank_ms=700,
            random_seed=protocol.bot_random_seed(SEED, names, seat),
        )
        expected[seat].append(request)
        second_of_two += len(legal) == 2 and action == legal[1].id
        game.apply(state, next(a for a in legal if a.id == action))
        if game.hands_finished(state) > hands:
            ended = protocol.hand_ended(
                match_id="m1",
                hand_number=hands,
                scores=game.scores(state),
                record=game.hand_records(state)[hands],
            )
            hands += 1
            for of_seat in expected:
                of_seat.append(ended)
    assert hands > 1 and second_of_two > 0
    assert length == pytest.approx(sum(record.move_ms) / 1000)
    end = protocol.match_ended(
        match_id="m1",
        scores=record.scores,
        ranks=record.ranks,
        forfeited=[False] * seats,
        voided=False,
        reason="",
    )
    for seat, bot in enumerate(bots):
        assert bot.inbox == [*expected[seat], end]
        ids = [r.request_id for r in bot.requests]
        assert len(set(ids)) == len(ids) and min(ids) > 0


def test_a_game_is_refused_a_seat_count_it_does_not_have() -> None:
    with pytest.raises(ValueError, match="seat"):
        MatchRunner(BotHub(), get_game("knaves"), "m1", SEED, [BotIdentity("a", "a")] * 2)


# -- faults: what each is charged as, with which words, and the seat's forfeit -------------


def illegal_for(request: pb.DecisionRequest) -> str:
    """A card of the deck that is not legal now (Knaves has every card's play)."""
    legal = {a.id for a in request.legal_actions}
    return next(a for a in ALL_PLAYS if a not in legal)


ALL_PLAYS = [f"play:{r}{s}" for s in "SHDC" for r in "23456789TJQKA"]


def shown(request: pb.DecisionRequest) -> str:
    ids = [a.id for a in request.legal_actions]
    return ", ".join(ids[:12]) + (" …" if len(ids) > 12 else "")


def test_every_wrong_answer_is_charged_with_its_words_and_the_fallback_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seat 0 answers wrong every time: an illegal card where 1, 12 or 13 actions are legal
    # (a forced decision; the list shown whole or cut), else in turn an illegal card, an
    # unknown action, a long unknown action, garbage bytes. It never forfeits.
    long = "x" * 500
    wrongs: list[str] = []

    def hostile(request: pb.DecisionRequest) -> Move:
        turn = len(wrongs) % 4 if len(request.legal_actions) not in (1, 12, 13) else 0
        wrongs.append(["illegal", "unknown", "long", "garbage"][turn])
        return [
            Move(action=illegal_for(request)),
            Move(action="not-an-action"),
            Move(action=long),
            Move(raw=b"\xff\xff\xff"),
        ][turn]

    clock = ClockSettings(move_ms=1000, fault_limit=1000)
    record, bots, _ = knaves([hostile, first, first], monkeypatch, clock)
    assert record.status == "finished" and record.forfeited == [False] * 3
    requests = bots[0].requests
    faults = record.faults_of(0)
    assert len(faults) == len(requests) == len(wrongs) and not record.faults_of(1)
    told = of_kind(bots[0], "fault")
    assert len(told) == len(faults)
    counts = {len(r.legal_actions) for r, w in zip(requests, wrongs, strict=True) if w == "illegal"}
    assert {1, 12, 13, 17} <= counts and set(wrongs) == {"illegal", "unknown", "long", "garbage"}
    for n, (fault, request, message) in enumerate(zip(faults, requests, told, strict=True)):
        legal = [a.id for a in request.legal_actions]
        fallback = legal[fallback_index(SEED, fault.decision, len(legal))]
        given = illegal_for(request)
        expected: dict[str, tuple[FaultKind, str]] = {
            "illegal": (
                "illegal_action",
                f"action {given!r} is not legal now; legal: {shown(request)}",
            ),
            "unknown": ("unknown_action", "action 'not-an-action' is no action of knaves"),
            "long": ("unknown_action", f"action {cap_text(long)!r} is no action of knaves"),
            "garbage": ("malformed", message.detail),  # the hub's words for the bytes
        }
        kind, detail = expected[wrongs[n]]
        assert fault == Fault(0, kind, detail, request.request_id, fault.decision, fallback)
        assert record.actions[fault.decision] == fallback
        assert (message.match_id, message.seat, message.kind, message.detail) == (
            "m1",
            0,
            kind,
            detail,
        )
        assert (message.request_id, message.fallback_action_id) == (request.request_id, fallback)
        assert (message.faults, message.forfeited) == (n + 1, False)
        assert detail
    game = get_game("knaves")
    state = game.new_match(SEED, 3, {})
    decisions = []
    for index, action in enumerate(record.actions):
        if game.to_act(state) == 0:
            decisions.append(index)
        game.apply(state, next(a for a in game.legal_actions(state) if a.id == action))
    assert [f.decision for f in faults] == decisions
    assert record.scores == replayed_scores(record)


def test_a_reply_naming_its_match_and_seat_counts_and_a_second_one_is_a_duplicate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = ClockSettings(move_ms=1000, fault_limit=1000)
    named = lambda request: Move(named=True, twice=request.seat == 2)  # noqa: E731
    record, bots, _ = knaves([named, named, named], monkeypatch, clock)
    assert record.status == "finished" and not record.faults_of(0) and not record.faults_of(1)
    duplicates = record.faults_of(2)
    assert [f.kind for f in duplicates] == ["duplicate"] * len(bots[2].requests)
    assert [f.request_id for f in duplicates] == [r.request_id for r in bots[2].requests]
    assert record.forfeited == [False] * 3


@pytest.mark.parametrize("limit", [0, 2])
def test_a_seat_forfeits_on_the_fault_past_the_limit_and_is_asked_no_more(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ClockSettings(move_ms=1000, fault_limit=limit)
    wrong = lambda request: Move(action="nope")  # noqa: E731
    record, bots, _ = knaves([first, wrong, first], monkeypatch, clock)
    assert record.status == "finished"
    assert [f.kind for f in record.faults_of(1)] == ["unknown_action"] * (limit + 1)
    assert len(bots[1].requests) == limit + 1  # then it plays the fallback without being asked
    told = of_kind(bots[1], "fault")
    assert [(m.faults, m.forfeited) for m in told] == [
        (n + 1, n == limit) for n in range(limit + 1)
    ]
    assert record.forfeited == [False, True, False]
    assert record.ranks[1] == 3 and sorted(record.ranks[::2]) in ([1, 2], [1, 1])
    forfeited_at = record.faults_of(1)[-1].decision
    game = get_game("knaves")
    state = game.new_match(SEED, 3, {})
    for index, action in enumerate(record.actions):
        seat = game.to_act(state)
        legal = game.legal_actions(state)
        if seat == 1 and index > forfeited_at:
            assert action == legal[fallback_index(SEED, index, len(legal))].id
            assert record.move_ms[index] == 0.0
        game.apply(state, next(a for a in legal if a.id == action))
    (ended,) = of_kind(bots[0], "match_ended")
    assert list(ended.forfeited) == [False, True, False]
    assert list(ended.ranks) == record.ranks


# -- the move clock and the bank -----------------------------------------------------------


def test_the_bank_pays_the_time_over_the_move_clock_and_a_timeout_empties_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seat 0: 1.2000004 s (bank 1500 -> 1300), 0.5 s (unchanged), silent (timeout after
    # 1000 + 1300 ms; bank 0), then 0.9 s: within the move clock, no bank needed.
    plan = [Move(think_s=1.2000004), Move(think_s=0.5), Move(silent=True), Move(think_s=0.9)]

    def script(request: pb.DecisionRequest) -> Move:
        return plan.pop(0) if plan else Move()

    clock = ClockSettings(move_ms=1000, bank_ms=1500)
    record, bots, _ = knaves([script, first, first], monkeypatch, clock)
    banks = [r.clock.bank_ms for r in bots[0].requests]
    assert banks[:5] == [1500, 1300, 1300, 0, 0]
    assert {r.clock.move_ms for r in bots[0].requests} == {1000}
    assert [r.clock.bank_ms for r in bots[1].requests[:5]] == [1500] * 5  # a bank per seat
    (fault,) = record.faults
    timed_out = bots[0].requests[2]
    detail = "no reply within 2300 ms (wall clock; cut off after 2300 ms of wall time)"
    assert fault == Fault(
        0, "timeout", detail, timed_out.request_id, fault.decision, fault.fallback
    )
    legal = [a.id for a in timed_out.legal_actions]
    assert fault.fallback == legal[fallback_index(SEED, fault.decision, len(legal))]
    assert record.actions[fault.decision] == fault.fallback
    own = [ms for i, ms in enumerate(record.move_ms) if i in seat_decisions(record, 0)]
    assert own[:5] == [1200.0, 500.0, 2300.0, 900.0, 0.0]  # to the microsecond
    (told,) = of_kind(bots[0], "fault")
    assert (told.kind, told.detail, told.faults, told.forfeited) == ("timeout", detail, 1, False)


def seat_decisions(record: MatchRecord, seat: int) -> list[int]:
    game = get_game(record.game)
    state = game.new_match(record.seed, len(record.seats), record.options)
    found = []
    for index, action in enumerate(record.actions):
        if game.to_act(state) == seat:
            found.append(index)
        game.apply(state, next(a for a in game.legal_actions(state) if a.id == action))
    return found


def test_on_the_cpu_clock_the_bank_pays_only_cpu_and_never_goes_below_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seat 0 is a managed bot with a CPU meter: 1.5 s of wall time but 0.25 s of CPU leaves
    # its bank whole; 0.5 s of wall time with 1.75 s of CPU (threads) takes 750 ms from it;
    # 0.25 s with 2.5 s of CPU is more than its bank (its meter is read only at a deadline).
    plan = [
        Move(think_s=1.5, cpu_s=0.25),
        Move(think_s=0.5, cpu_s=1.75),
        Move(think_s=0.25, cpu_s=2.5),
    ]

    def script(request: pb.DecisionRequest) -> Move:
        return plan.pop(0) if plan else Move()

    record, bots = cpu_match(script, 10.0, monkeypatch)
    banks = [r.clock.bank_ms for r in bots[0].requests]
    assert banks[:5] == [1000, 1000, 250, 0, 0]
    assert record.faults == []
    own = [record.move_ms[i] for i in seat_decisions(record, 0)]
    assert own[:3] == [1500.0, 500.0, 250.0]


def cpu_match(
    script: Script, meter_start: float, monkeypatch: pytest.MonkeyPatch
) -> tuple[MatchRecord, list[Bot]]:
    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot]]:
        hub = BotHub(cpu_clocks=True)
        hub.managed_started("b0", Meter(meter_start))
        bots = connect(hub, [script, first, first])
        clock = ClockSettings(move_ms=1000, bank_ms=1000)
        return await runner(hub, [b.identity for b in bots], clock).run(), bots

    return run_virtual(go, monkeypatch)


@pytest.mark.parametrize("meter_start", [0.0, 10.0])
def test_on_the_cpu_clock_a_silent_bot_is_cut_off_at_the_wall_cap(
    meter_start: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = [Move(silent=True)]
    record, bots = cpu_match(lambda r: silent.pop() if silent else Move(), meter_start, monkeypatch)
    (fault,) = record.faults
    # The CPU never moves while it is silent: cut off at the wall cap, 3 x (1000 + 1000) ms.
    detail = "no reply within 2000 ms (CPU clock; cut off after 6000 ms of wall time)"
    assert (fault.kind, fault.detail) == ("timeout", detail)
    assert record.move_ms[fault.decision] == 2000.0
    assert [r.clock.bank_ms for r in bots[0].requests[:2]] == [1000, 0]


# -- a stream that drops: the grace, a new stream, and the forfeit -------------------------


def test_a_bot_that_does_not_come_back_within_the_grace_forfeits_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hangs = [Move(think_s=0.25), Move(hang_up=True)]
    record, bots, length = knaves(
        [lambda r: hangs.pop(0), first, first],
        monkeypatch,
        ClockSettings(move_ms=1000, grace_s=2.5, fault_limit=5),
    )
    (fault,) = record.faults
    decision = seat_decisions(record, 0)[1]
    legal = [a.id for a in bots[0].requests[1].legal_actions]
    fallback = legal[fallback_index(SEED, decision, len(legal))]
    detail = "disconnected and not back within 2.5 s"
    assert fault == Fault(0, "disconnected", detail, 0, decision, fallback)
    assert record.forfeited == [True, False, False] and record.ranks[0] == 3
    assert record.move_ms[decision] == 0.0 and record.actions[decision] == fallback
    assert length == pytest.approx(0.25 + 2.5)  # the wait was exactly the grace
    assert len(bots[0].requests) == 2 and of_kind(bots[0], "fault") == []  # nobody to tell


@pytest.mark.parametrize(("grace", "given_up_at"), [(2.5, 2.5), (0.5, 1.0)])
def test_a_bot_gone_during_others_turns_is_waited_for_only_the_rest_of_the_grace(
    grace: float, given_up_at: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seat 1 thinks 1 s a move; seat 0's stream drops as seat 1 is asked (right after seat 0
    # answered): by its own next turn, at 1 s, 1 s of its grace is gone (0.5 s: all of it).
    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], list[float]]:
        hub = BotHub()
        bots = connect(hub, [first, first, first])
        start = time.now
        asked_at: list[float] = []

        def drop_seat_0(request: pb.DecisionRequest) -> Move:
            if not asked_at:
                hub.detach(bots[0])
            asked_at.append(time.now - start)
            return Move(think_s=1.0)

        bots[1].script = drop_seat_0
        clock = ClockSettings(move_ms=5000, grace_s=grace)
        record = await runner(hub, [b.identity for b in bots], clock).run()
        return record, bots, asked_at

    record, bots, asked_at = run_virtual(go, monkeypatch)
    (fault,) = record.faults
    assert (fault.seat, fault.kind) == (0, "disconnected")
    # Seat 1 is asked at 0 and again once seat 0 is given up.
    assert asked_at[:2] == [0.0, pytest.approx(given_up_at)]


def test_a_bot_back_within_the_grace_is_asked_the_same_again_and_plays_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hangs = [Move(), Move(hang_up=True, back_after_s=0.75), Move(think_s=0.5)]
    record, bots, length = knaves(
        [lambda r: hangs.pop(0) if hangs else Move(), first, first],
        monkeypatch,
        ClockSettings(move_ms=1000, bank_ms=300, grace_s=2.0),
    )
    assert record.status == "finished" and record.faults == [] and record.forfeited == [False] * 3
    cut, again = bots[0].requests[1], bots[0].requests[2]
    assert again.request_id != cut.request_id
    cut.request_id = again.request_id
    assert again == cut  # the same request, a new id
    decision = seat_decisions(record, 0)[1]
    assert record.move_ms[decision] == 500.0  # the time on the request it answered
    assert length == pytest.approx(0.75 + 0.5)
    assert record.scores == replayed_scores(record)


# -- seating: who never connects --------------------------------------------------------


@pytest.mark.parametrize("gone", [None, "exited with status 3 before it connected"])
def test_a_bot_that_never_connects_is_charged_a_no_show_and_forfeits(
    gone: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], float]:
        hub = BotHub()
        bots = connect(hub, [first, first])
        missing = BotIdentity("b2", "bot2")
        if gone is not None:
            hub.mark_gone("b2", gone)
        start = time.now
        clock = ClockSettings(move_ms=1000, no_show_s=4.0)
        record = await runner(hub, [b.identity for b in bots] + [missing], clock).run()
        return record, bots, time.now - start

    record, bots, length = run_virtual(go, monkeypatch)
    detail = "bot 'bot2' " + (gone or "did not connect within 4 s")
    assert record.faults[0] == Fault(2, "no_show", detail, 0, 0, "")
    assert len(record.faults) == 1 and record.forfeited == [False, False, True]
    assert record.status == "finished" and record.ranks[2] == 3
    assert length == pytest.approx(0.0 if gone else 4.0)
    for seat, bot in enumerate(bots):
        started = of_kind(bot, "match_started")
        assert [s.seat for s in started] == [seat]
        assert [s.bot_name for s in started[0].seats] == NAMES


def test_a_bot_in_two_seats_is_told_of_each_seat_but_of_each_hand_and_the_end_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot]]:
        hub = BotHub()
        bots = connect(hub, [first, first])
        ids = [bots[0].identity, bots[1].identity, bots[0].identity]
        return await runner(hub, ids, ClockSettings()).run(), bots

    record, bots = run_virtual(go, monkeypatch)
    assert record.status == "finished" and record.seats == ["bot0", "bot1", "bot0"]
    twice = bots[0]
    assert [s.seat for s in of_kind(twice, "match_started")] == [0, 2]
    assert len(of_kind(twice, "match_ended")) == 1
    hands = of_kind(twice, "hand_ended")
    assert [h.hand_number for h in hands] == list(range(len(hands))) and hands
    assert {r.seat for r in twice.requests} == {0, 2}
    assert twice.requests[0].random_seed != next(
        r.random_seed for r in twice.requests if r.seat == 2
    )


# -- the server's own failures void the match --------------------------------------------


class Breaking:
    """Knaves, but the engine fails on its nth apply (0: already on the deal)."""

    def __init__(self, at: int) -> None:
        self.real = get_game("knaves")
        self.at = at
        self.applied = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def new_match(self, seed: int, seats: int, options: Any) -> MatchState:
        if self.at == 0:
            raise ValueError("no deal")
        state: MatchState = self.real.new_match(seed, seats, options)
        return state

    def apply(self, state: MatchState, action: Action) -> None:
        self.applied += 1
        if self.applied == self.at:
            raise RuntimeError("boom")
        self.real.apply(state, action)


@pytest.mark.parametrize("at", [0, 55])  # 55: in the second hand
def test_a_failure_of_the_engine_voids_the_match_with_the_scores_so_far(
    at: int, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = Breaking(at)

    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], BotHub, LiveMatches]:
        hub, lives = BotHub(), LiveMatches()
        bots = connect(hub, [first, first, first])
        game: Any = engine
        match = runner(hub, [b.identity for b in bots], ClockSettings(), game=game, live=lives)
        return await match.run(), bots, hub, lives

    with caplog.at_level(logging.ERROR, "server.match.runner"):
        record, bots, hub, lives = run_virtual(go, monkeypatch)
    (logged,) = [r for r in caplog.records if r.name == "server.match.runner"]
    assert logged.getMessage() == "match m1 voided" and logged.exc_info is not None
    reason = (
        "server error: ValueError('no deal')" if at == 0 else "server error: RuntimeError('boom')"
    )
    assert (record.status, record.reason) == ("voided", reason)
    if at:
        state = engine.real.replay(SEED, 3, {}, record.actions)
        assert record.scores == engine.real.scores(state) and sum(record.scores) > 0
        assert len(record.actions) == at - 1
    else:
        assert record.scores == [0, 0, 0] and record.actions == []
    assert record.ranks == [1 + sum(o > s for o in record.scores) for s in record.scores]
    for bot in bots:
        (ended,) = of_kind(bot, "match_ended")
        assert (ended.voided, ended.reason, list(ended.scores)) == (True, reason, record.scores)
    assert hub.seats_of("b0") == {} and "m1" not in lives


def test_a_cancelled_match_is_voided_and_every_bot_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(time: VirtualClock) -> tuple[MatchRecord, list[Bot], BotHub, LiveMatches]:
        hub, lives = BotHub(), LiveMatches()
        bots = connect(hub, [first, lambda r: Move(think_s=60), first])
        match = runner(hub, [b.identity for b in bots], ClockSettings(move_ms=100_000), live=lives)
        task = asyncio.ensure_future(match.run())
        await until(lambda: bool(bots[1].requests) or task.done())
        assert "m1" in lives and hub.seats_of("b1")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return match.record, bots, hub, lives

    record, bots, hub, lives = run_virtual(go, monkeypatch)
    assert (record.status, record.reason) == ("voided", "cancelled")
    assert record.scores == [0, 0, 0] and record.forfeited == [False] * 3
    assert record.ranks == [1, 1, 1]
    for bot in bots:
        (ended,) = of_kind(bot, "match_ended")
        assert (ended.voided, ended.reason) == (True, "cancelled")
    assert hub.seats_of("b1") == {} and "m1" not in lives


def test_watchers_are_told_of_every_step_and_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    watched: list[LiveMatch] = []

    async def go(time: VirtualClock) -> tuple[MatchRecord, list[int]]:
        hub, lives = BotHub(), LiveMatches()
        # Five seats (not Kansas City's default four) and options: the spectator needs both.
        names = [f"bot{seat}" for seat in range(5)]
        bots = connect(hub, [lambda r: Move(think_s=0.01)] * 5, names)
        options = {"hands": 1, "numbers_public": False}
        game, ids = get_game("kansas-city"), [b.identity for b in bots]
        match = MatchRunner(hub, game, "m1", SEED, ids, options, ClockSettings(), lives)
        task = asyncio.ensure_future(match.run())
        await asyncio.sleep(0)
        seen: list[int] = []
        with lives.watch("m1") as live:
            assert live is match.live
            watched.append(live)
            while not live.over:
                await live.next_change().wait()
                seen.append(len(live.actions))
        return await task, seen

    record, seen = run_virtual(go, monkeypatch)
    assert seen == list(range(1, len(record.actions) + 1))  # the last wake sees it over
    # What a spectator replays from: the engine, deal, seats and options of the match.
    live = watched[0]
    assert live.actions == record.actions and live.over
    assert (live.seats, dict(live.options)) == (5, record.options) and record.options["hands"] == 1
    state = live.game.replay(live.seed, live.seats, live.options, live.actions)
    assert list(live.game.result(state).scores) == record.scores
