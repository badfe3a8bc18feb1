"""What a bot reads on the wire, message by message (issue 37: server.codec.protocol under mutmut).

Every test compares what the server's encoder put on the wire with an independent encoding
of the same game objects: protobuf's own constructor for views and actions, and
Struct.update for JSON-like records. The protocol keeps per-process caches of encoded parts
(actions, shared view tuples, Struct leaves); each test here starts with them empty, so the
encoding itself is what is checked, and encodes twice where a cache could answer the second
time wrongly."""

from __future__ import annotations

import asyncio
import enum
import random
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf import struct_pb2

from cardshark.v1 import referee_pb2 as pb
from games.base import Action
from games.registry import all_games, get_game
from server.codec import protocol
from server.match.hub import BotHub
from server.match.records import ClockSettings, MatchRecord
from server.match.runner import MatchRunner
from server.match.sessions import BotIdentity, Outgoing
from server.transport import service
from tests.server.test_seams import Chooser, WireBot, engine_fields, wire_fields


def _clear_caches() -> None:
    for name, value in vars(protocol).items():
        if name.startswith("_") and name.isupper() and isinstance(value, dict):
            value.clear()
    for function in (protocol.view_field, protocol.shared_fields):
        clear = getattr(function, "cache_clear", None)
        if clear is not None:
            clear()


@pytest.fixture(autouse=True)
def cold_caches() -> Iterator[None]:
    """The protocol's caches live as long as the process: empty them around each test."""
    _clear_caches()
    yield
    _clear_caches()


def reference_struct(data: Mapping[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


def over_the_wire(msg: pb.RefereeMessage) -> pb.RefereeMessage:
    return pb.RefereeMessage.FromString(msg.SerializeToString())


# -- a whole match of every game, read by its bots ------------------------------------------


@dataclass(eq=False)
class ReadingBot(WireBot):
    """A WireBot that keeps every message it read, in order."""

    read: list[pb.RefereeMessage] = field(default_factory=list)

    def send(self, msg: Outgoing) -> None:
        """Keep what the bot read, then answer as a WireBot does."""
        self.read.append(pb.RefereeMessage.FromString(service.encode_outgoing(msg)))
        super().send(msg)


def faulty(seed: int, every: int) -> Chooser:
    """A seeded random bot that answers every `every`-th request with no action at all."""
    rng = random.Random(seed)
    asked = 0

    def choose(request: pb.DecisionRequest) -> str:
        nonlocal asked
        asked += 1
        return "no-such-action" if asked % every == 0 else rng.choice(request.legal_actions).id

    return choose


async def play_reading(
    game: str, clock: ClockSettings, seed: int
) -> tuple[MatchRecord, list[ReadingBot]]:
    hub = BotHub()
    seats = get_game(game).spec.default_seats
    bots = []
    for seat in range(seats):
        choose = faulty(seed + seat, 4) if seat == 1 else faulty(seed + seat, 10**9)
        bot = ReadingBot(BotIdentity(f"b{seat}", f"bot {seat}"), hub=hub, choose=choose)
        assert hub.attach(bot)
        bots.append(bot)
    runner = MatchRunner(hub, get_game(game), "m-7", seed, [b.identity for b in bots], clock=clock)
    return await runner.run(), bots


def kinds(messages: list[pb.RefereeMessage], kind: str) -> list[Any]:
    return [getattr(m, kind) for m in messages if m.WhichOneof("kind") == kind]


@pytest.mark.parametrize("game", sorted(all_games()))
def test_every_message_of_a_match_reads_as_the_engine_and_the_record_say(game: str) -> None:
    engine = get_game(game)
    clock = ClockSettings(move_ms=5000, bank_ms=20_000, fault_limit=2)
    record, bots = asyncio.run(play_reading(game, clock, seed=11))
    assert record.status == "finished", record.reason
    seats = len(bots)
    field_name = protocol.view_field(game)

    # Replay the record through the engine: what each bot should have been asked, and the
    # hands as they ended.
    forfeit_at = {f.seat: f.decision for f in record.faults if f.seat == 1}
    faults_by_seat = [record.faults_of(s) for s in range(seats)]
    assert len(faults_by_seat[1]) == clock.fault_limit + 1 and record.forfeited[1]
    expected_requests: list[list[tuple[pb.DecisionRequest, list[Action]]]] = [
        [] for _ in range(seats)
    ]
    hands: list[tuple[int, list[int], struct_pb2.Struct]] = []
    state = engine.new_match(record.seed, seats, record.options)
    for index, action_id in enumerate(record.actions):
        seat = engine.to_act(state)
        assert seat is not None
        legal = engine.legal_actions(state)
        if index <= forfeit_at.get(seat, index):
            fields: dict[str, Any] = {field_name: engine.view(state, seat)}
            view = pb.DecisionRequest(**fields)
            expected_requests[seat].append((view, legal))
        engine.apply(state, next(a for a in legal if a.id == action_id))
        records = engine.hand_records(state)
        while len(hands) < len(records):
            hands.append((len(hands), engine.scores(state), reference_struct(records[len(hands)])))

    for seat, bot in enumerate(bots):
        read = bot.read
        assert read[0].WhichOneof("kind") == "match_started"
        assert read[-1].WhichOneof("kind") == "match_ended"
        (started,) = kinds(read, "match_started")
        assert (started.match_id, started.game, started.seat) == ("m-7", game, seat)
        assert started.options == reference_struct(record.options)
        assert [(s.seat, s.bot_name) for s in started.seats] == [
            (i, f"bot {i}") for i in range(seats)
        ]
        assert (started.clock.move_ms, started.clock.bank_ms) == (5000, 20_000)

        requests = kinds(read, "request")
        assert len(requests) == len(expected_requests[seat])
        seed_of_seat = protocol.bot_random_seed(record.seed, record.seats, seat)
        for got, (view, legal) in zip(requests, expected_requests[seat], strict=True):
            assert (got.match_id, got.seat, got.game) == ("m-7", seat, game)
            assert (got.clock.move_ms, got.clock.bank_ms) == (5000, 20_000)
            assert got.random_seed == seed_of_seat
            assert got.WhichOneof("view") == field_name
            assert getattr(got, field_name) == getattr(view, field_name)
            assert [wire_fields(a) for a in got.legal_actions] == [engine_fields(a) for a in legal]
        assert len({r.request_id for r in requests}) == len(requests)

        ended_hands = kinds(read, "hand_ended")
        assert [(h.match_id, h.hand_number, list(h.scores), h.record) for h in ended_hands] == [
            ("m-7", n, scores, rec) for n, scores, rec in hands
        ]

        told = kinds(read, "fault")
        assert [
            (
                t.match_id,
                t.seat,
                t.kind,
                t.detail,
                t.request_id,
                t.fallback_action_id,
                t.faults,
                t.forfeited,
            )
            for t in told
        ] == [
            ("m-7", seat, f.kind, f.detail, f.request_id, f.fallback, n, n > clock.fault_limit)
            for n, f in enumerate(faults_by_seat[seat], start=1)
        ]

        (ended,) = kinds(read, "match_ended")
        assert ended.match_id == "m-7" and not ended.voided and ended.reason == record.reason
        assert list(ended.scores) == record.scores and list(ended.ranks) == record.ranks
        assert list(ended.forfeited) == record.forfeited == [s == 1 for s in range(seats)]
    assert len({protocol.bot_random_seed(record.seed, record.seats, s) for s in range(seats)}) > 1


# -- actions --------------------------------------------------------------------------------

ACTIONS = [
    Action("bid:0", "bid", number=0),  # zero is a number, not an absent one
    Action("give:0", "give", seat=0),  # seat 0 likewise
    Action("pass", "pass"),  # number and seat absent
    Action("play:QS", "play", card="QS", suit="S"),
    Action("discard:QS+JD", "discard", cards=("QS", "JD"), number=2, seat=3, token="t-1"),
]


def test_every_action_field_reaches_the_bot_and_a_zero_is_not_an_absence() -> None:
    for _ in range(2):  # the second time from whatever the first one kept
        msg = over_the_wire(
            protocol.decision_request(
                game_name="knaves",
                request_id=3,
                match_id="m",
                seat=1,
                view={"seat": 1},
                actions=ACTIONS,
                move_ms=10,
                bank_ms=20,
            )
        )
        got = [wire_fields(a) for a in msg.request.legal_actions]
        assert got == [engine_fields(a) for a in ACTIONS]
        assert [protocol.action_message(a) for a in ACTIONS] == list(msg.request.legal_actions)


def test_a_request_is_exactly_its_fields_with_no_stray_bytes_between_its_parts() -> None:
    first, second = trick(0, "AS", "KS", "QS"), trick(1, "2H", "3H", "4H")
    view = {"seat": 2, "hand": ["9C"], "tricks": (first, second)}
    for _ in range(2):
        data = protocol.decision_request(
            game_name="knaves",
            request_id=8,
            match_id="m",
            seat=2,
            view=dict(view),
            actions=ACTIONS,
            move_ms=10,
            bank_ms=20,
            random_seed=99,
        ).SerializeToString()
        legal = [{k: v for k, v in engine_fields(a).items() if v is not None} for a in ACTIONS]
        want = pb.RefereeMessage(
            request={
                "request_id": 8,
                "match_id": "m",
                "seat": 2,
                "game": "knaves",
                "clock": {"move_ms": 10, "bank_ms": 20},
                "random_seed": 99,
                "knaves": {**view, "tricks": [first, second]},
                "legal_actions": legal,
            }
        )
        got = pb.RefereeMessage.FromString(data)
        assert got == want
        assert len(data) == want.ByteSize()  # nothing a bot's parser would have to skip


def test_a_request_carries_its_header_and_no_seed_reads_as_zero() -> None:
    msg = over_the_wire(
        protocol.decision_request(
            game_name="ninja-whist",
            request_id=41,
            match_id="m-41",
            seat=2,
            view={"seat": 2, "hand": ["AS", "KD"]},
            actions=ACTIONS[:1],
            move_ms=150,
            bank_ms=900,
        )
    )
    request = msg.request
    assert (request.request_id, request.match_id, request.seat, request.game) == (
        41,
        "m-41",
        2,
        "ninja-whist",
    )
    assert (request.clock.move_ms, request.clock.bank_ms, request.random_seed) == (150, 900, 0)
    assert list(request.ninja_whist.hand) == ["AS", "KD"] and request.ninja_whist.seat == 2
    assert request.ninja_whist.tricks == [] and request.ninja_whist.play_areas == []


# -- shared view tuples: a grown tuple, a replaced one, one that only starts the same --------


def trick(leader: int, *cards: str) -> dict[str, Any]:
    return {"leader": leader, "cards": list(cards), "winner": (leader + 1) % 3}


def knaves_tricks(view: dict[str, Any]) -> list[Any]:
    msg = protocol.decision_request(
        game_name="knaves",
        request_id=1,
        match_id="m",
        seat=0,
        view=view,
        actions=[],
        move_ms=1,
        bank_ms=0,
    )
    return list(over_the_wire(msg).request.knaves.tricks)


def reference_tricks(tricks: Any) -> list[Any]:
    return list(pb.DecisionRequest(knaves={"tricks": list(tricks)}).knaves.tricks)


def test_shared_tuples_read_as_their_items_however_they_grew() -> None:
    first, second, third = trick(0, "AS", "KS", "QS"), trick(1, "2H", "3H"), trick(2, "9C")
    one = (first,)
    grown = (*one, second)  # the same objects and one more: shared_view's growth
    grown_again = (*grown, third)
    forked = (first, dict(second, leader=2), third)  # starts the same, then differs
    shrunk = (first,)  # a new, shorter tuple (a new hand's list)
    for _ in range(2):
        for value in (one, grown, grown_again, grown, forked, shrunk, one, grown_again):
            assert knaves_tricks({"seat": 0, "tricks": value}) == reference_tricks(value)
    # A list (not a shared tuple) reads the same.
    assert knaves_tricks({"tricks": [first, second]}) == reference_tricks([first, second])


def test_a_new_hand_of_tricks_is_not_read_as_the_old_one_grown() -> None:
    old = (trick(0, "AS"), trick(1, "KS"))
    new = (old[0], trick(2, "QS"), trick(0, "JS"))  # same first object, not a growth of old
    assert knaves_tricks({"tricks": old}) == reference_tricks(old)
    assert knaves_tricks({"tricks": new}) == reference_tricks(new)


# -- records and options: JSON-like data as a Struct ----------------------------------------


class Suit(enum.IntEnum):
    HEARTS = 2


RECORDS: list[dict[str, Any]] = [
    {"int": 1, "bool": True, "str": "x", "none": None, "float": 1.5, "empty": {}, "none2": None},
    {
        "nested": {"inner": {"deep": [1, 2]}, "flag": False, "name": "n"},
        "mixed": [1, "a", {"k": [True, None]}, 2.5, [3, [4, "b"]], "c", (5, 6), False],
        "tuple": (1, "two", 3.0),
        "empty_list": [],
        "ordered": OrderedDict(z=1, a=[2]),
        "enum": Suit.HEARTS,
        "enums": [Suit.HEARTS, 7, Suit.HEARTS],
    },
    # The same keys with values a cache keyed carelessly would confuse: 1 and True are equal.
    {"int": True, "bool": 1, "str": "y", "none": 0, "mixed": [True, 1, 1.0, "1", None]},
    {"a": [{"x": 1}, {"x": True}, {"y": 1}], "b": [[1], [True]]},
]


def test_records_read_as_the_standard_struct_conversion() -> None:
    for _ in range(2):
        for data in RECORDS:
            got = protocol.struct(data)
            want = reference_struct(data)
            assert got == want, data
            assert got.SerializeToString(deterministic=True) == want.SerializeToString(
                deterministic=True
            )


def test_a_hand_record_reaches_every_bot_as_written() -> None:
    record = RECORDS[1]
    msg = over_the_wire(
        protocol.hand_ended(match_id="m", hand_number=4, scores=[3, -2, 0], record=record)
    )
    ev = msg.hand_ended
    assert (ev.match_id, ev.hand_number, list(ev.scores)) == ("m", 4, [3, -2, 0])
    assert ev.record == reference_struct(record)


def test_options_in_match_started_read_as_given() -> None:
    options = {"target": 21, "fixed_suits": False, "mode": "voluntary", "weights": [0.5, 1]}
    msg = over_the_wire(
        protocol.match_started(
            match_id="m",
            game_name="kill",
            options=options,
            seat=0,
            names=["a", "b"],
            move_ms=5,
            bank_ms=6,
        )
    )
    assert msg.match_started.options == reference_struct(options)
    assert [(s.seat, s.bot_name) for s in msg.match_started.seats] == [(0, "a"), (1, "b")]


# -- the rest of the wire: games, the bot's seed, welcome -----------------------------------


def test_every_registered_game_is_one_the_wire_carries_by_its_name() -> None:
    assert protocol.supported_games() == set(all_games())
    for game in all_games():
        assert pb.DecisionRequest.DESCRIPTOR.fields_by_name[protocol.view_field(game)]


def test_a_bots_seed_is_the_documented_one_way_hash_and_stable_across_versions() -> None:
    # docs/protocol.md: "a one-way hash of the deal's seed, the seating and your seat, so a
    # seeded tournament plays the same wherever it is replayed": a server upgrade must not
    # change it. The value is pinned.
    assert protocol.bot_random_seed(7, ["alpha", "beta", "gamma"], 1) == PINNED_SEED
    seeds = {
        protocol.bot_random_seed(7, ["alpha", "beta", "gamma"], 2),
        protocol.bot_random_seed(8, ["alpha", "beta", "gamma"], 1),
        protocol.bot_random_seed(7, ["beta", "alpha", "gamma"], 1),
        PINNED_SEED,
    }
    assert len(seeds) == 4 and all(0 <= s < 2**64 for s in seeds)


PINNED_SEED = 7776190953413846933  # blake2b-64 of "cardshark-bot:7:1:alpha/beta/gamma"


def test_welcome_names_the_bot_and_both_versions() -> None:
    msg = over_the_wire(protocol.welcome("my bot", "1.2.3"))
    assert msg.welcome.bot_name == "my bot" and msg.welcome.server_version == "1.2.3"
    assert msg.welcome.protocol_version == protocol.PROTOCOL_VERSION == 1
