"""The one module that converts between game objects and protobuf messages."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import struct_pb2

from cardshark.v1 import referee_pb2 as pb
from games.base import Action

PROTOCOL_VERSION = 1
_ACTION_CACHE: dict[str, pb.Action] = {}
SHARED_CACHE_SIZE = 4096
_SHARED_CACHE: dict[tuple[int, str, str], tuple[tuple[Any, ...], bytes]] = {}
# The same entries by the id of their tuple's first item: the latest tuple starting with it.
_SHARED_HEADS: dict[tuple[int, str, str], tuple[tuple[Any, ...], bytes]] = {}
_ACTION_BYTES: dict[str, bytes] = {}


@functools.cache
def view_field(game_name: str) -> str:
    """The DecisionRequest oneof field that carries this game's view."""
    return game_name.replace("-", "_")


def supported_games() -> set[str]:
    """Game names the compiled protocol has a view message for (hyphens restored)."""
    oneof = pb.DecisionRequest.DESCRIPTOR.oneofs_by_name["view"]
    return {f.name.replace("_", "-") for f in oneof.fields}


def action_message(action: Action) -> pb.Action:
    """The protobuf form of an action (cached: actions with one id never change)."""
    msg = _ACTION_CACHE.get(action.id)
    if msg is None:
        msg = pb.Action(
            id=action.id,
            kind=action.kind,
            card=action.card,
            cards=list(action.cards),
            suit=action.suit,
            token=action.token,
        )
        if action.number >= 0:
            msg.number = action.number
        if action.seat >= 0:
            msg.seat = action.seat
        _ACTION_CACHE[action.id] = msg
    return msg


@functools.cache
def shared_fields(game_name: str) -> tuple[str, ...]:
    """The game's view fields that are lists of messages (the ones worth sharing)."""
    view = pb.DecisionRequest.DESCRIPTOR.fields_by_name[view_field(game_name)].message_type
    assert view is not None, f"{game_name} has no view message"
    return tuple(f.name for f in view.fields if f.message_type is not None and f.is_repeated)


# Serialized fields concatenate into a message (protobuf appends repeated fields and merges
# submessages), so the parts of a request that recur are kept as the wire bytes of a
# RefereeMessage holding just that part, and merged into the request in one call.


def _action_bytes(action: Action) -> bytes:
    """A RefereeMessage holding only this legal action, serialized (cached per action id)."""
    data = _ACTION_BYTES.get(action.id)
    if data is None:
        part = pb.RefereeMessage(request={"legal_actions": [action_message(action)]})
        data = _ACTION_BYTES[action.id] = part.SerializeToString()
    return data


def _shared_bytes(field: str, name: str, value: tuple[Any, ...]) -> bytes:
    """A RefereeMessage holding only one shared (tuple) view field, serialized once per
    tuple (held in the cache, so its id is not reused while cached). A tuple that extends
    the last one cached for its first item (shared_view appends) serializes only the rest:
    repeated fields concatenate."""
    key = (id(value), field, name)
    hit = _SHARED_CACHE.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    data = None
    if value:
        head = (id(value[0]), field, name)
        last = _SHARED_HEADS.get(head)
        if last is not None and len(last[0]) < len(value) and last[0][0] is value[0]:
            done = last[0]
            if all(a is b for a, b in zip(done, value, strict=False)):
                rest = value[len(done) :]
                data = (
                    last[1] + pb.RefereeMessage(request={field: {name: rest}}).SerializeToString()
                )
    if data is None:
        data = pb.RefereeMessage(request={field: {name: value}}).SerializeToString()
    if len(_SHARED_CACHE) >= SHARED_CACHE_SIZE:
        _SHARED_CACHE.clear()
        _SHARED_HEADS.clear()
    _SHARED_CACHE[key] = (value, data)
    if value:
        _SHARED_HEADS[(id(value[0]), field, name)] = (value, data)
    return data


def struct(data: Mapping[str, Any]) -> struct_pb2.Struct:
    """A JSON-ready mapping as a google.protobuf.Struct."""
    # Struct.update converts leaf by leaf in Python (~150 us for a Knives hand record, on the
    # referee's critical path at every hand end); this walk merges runs of leaves from cached
    # wire bytes and is ~2x faster. test_proto checks it against Struct.update.
    out = struct_pb2.Struct()
    _fill_struct(out, data)
    return out


_LEAF_TYPES = (str, int, float, bool, type(None))
LEAF_CACHE_SIZE = 65536
_ENTRY_BYTES: dict[tuple[str, type, Any], bytes] = {}
_ITEM_BYTES: dict[tuple[type, Any], bytes] = {}


def _fill_struct(out: struct_pb2.Struct, data: Mapping[str, Any]) -> None:
    leaves = []
    for key, value in data.items():
        kind = type(value)
        if kind is list or kind is tuple:
            inner = out.fields[key].list_value
            inner.SetInParent()
            _fill_list(inner, value)
        elif kind is dict:
            nested = out.fields[key].struct_value
            nested.SetInParent()
            _fill_struct(nested, value)
        elif kind in _LEAF_TYPES:
            leaves.append(_entry_bytes(key, value))
        else:
            out[key] = value  # anything else: the library's own conversion (or its error)
    if leaves:
        out.MergeFromString(b"".join(leaves))


def _fill_list(out: struct_pb2.ListValue, items: Sequence[Any]) -> None:
    leaves: list[bytes] = []
    for item in items:
        kind = type(item)
        if kind in _LEAF_TYPES:
            leaves.append(_item_bytes(item))
            continue
        if leaves:  # keep the order: what came before goes in first
            out.MergeFromString(b"".join(leaves))
            leaves = []
        if kind is list or kind is tuple:
            inner = out.values.add().list_value
            inner.SetInParent()
            _fill_list(inner, item)
        elif kind is dict:
            nested = out.values.add().struct_value
            nested.SetInParent()
            _fill_struct(nested, item)
        else:
            out.append(item)
    if leaves:
        out.MergeFromString(b"".join(leaves))


def _entry_bytes(key: str, value: Any) -> bytes:
    """A Struct holding only key: value, serialized (cached)."""
    cache_key = (key, type(value), value)
    data = _ENTRY_BYTES.get(cache_key)
    if data is None:
        entry = struct_pb2.Struct()
        entry[key] = value
        data = entry.SerializeToString()
        if len(_ENTRY_BYTES) >= LEAF_CACHE_SIZE:
            _ENTRY_BYTES.clear()
        _ENTRY_BYTES[cache_key] = data
    return data


def _item_bytes(value: Any) -> bytes:
    """A ListValue holding only value, serialized (cached)."""
    cache_key = (type(value), value)
    data = _ITEM_BYTES.get(cache_key)
    if data is None:
        item = struct_pb2.ListValue()
        item.append(value)
        data = item.SerializeToString()
        if len(_ITEM_BYTES) >= LEAF_CACHE_SIZE:
            _ITEM_BYTES.clear()
        _ITEM_BYTES[cache_key] = data
    return data


def bot_random_seed(seed: int, seats: Sequence[str], seat: int) -> int:
    """A seat's DecisionRequest.random_seed: one-way from the deal's seed, seating and seat."""
    seating = "/".join(seats)
    digest = hashlib.blake2b(f"cardshark-bot:{seed}:{seat}:{seating}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def decision_request(
    *,
    game_name: str,
    request_id: int,
    match_id: str,
    seat: int,
    view: dict[str, Any],
    actions: Sequence[Action],
    move_ms: int,
    bank_ms: int,
    random_seed: int = 0,
) -> pb.RefereeMessage:
    """A DecisionRequest with the seat's typed view (taken over), legal actions and clock."""
    field = view_field(game_name)
    # The view's shared tuples (see games.base.shared_view) and the legal actions are merged
    # in from cached bytes; the rest is built by one constructor call from a nested dict
    # (~30% cheaper than setting fields one by one).
    parts = [_action_bytes(a) for a in actions]
    for name in shared_fields(game_name):
        value = view.get(name)
        if type(value) is tuple:
            parts.append(_shared_bytes(field, name, view.pop(name)))
    msg = pb.RefereeMessage(
        request={
            "request_id": request_id,
            "match_id": match_id,
            "seat": seat,
            "game": game_name,
            "clock": {"move_ms": move_ms, "bank_ms": bank_ms},
            "random_seed": random_seed,
            field: view,
        }
    )
    msg.MergeFromString(b"".join(parts))
    return msg


def match_started(
    *,
    match_id: str,
    game_name: str,
    options: Mapping[str, Any],
    seat: int,
    names: Sequence[str],
    move_ms: int,
    bank_ms: int,
) -> pb.RefereeMessage:
    """The MatchStarted event for one seat."""
    msg = pb.RefereeMessage()
    ev = msg.match_started
    ev.match_id, ev.game, ev.seat = match_id, game_name, seat
    ev.options.CopyFrom(struct(options))
    ev.seats.extend([pb.SeatInfo(seat=i, bot_name=n) for i, n in enumerate(names)])
    ev.clock.move_ms, ev.clock.bank_ms = move_ms, bank_ms
    return msg


def hand_ended(
    *, match_id: str, hand_number: int, scores: Sequence[int], record: Mapping[str, Any]
) -> pb.RefereeMessage:
    """The HandEnded event with the hand's full record."""
    msg = pb.RefereeMessage()
    ev = msg.hand_ended
    ev.match_id, ev.hand_number = match_id, hand_number
    ev.scores.extend(scores)
    ev.record.CopyFrom(struct(record))
    return msg


def match_ended(
    *,
    match_id: str,
    scores: Sequence[int],
    ranks: Sequence[int],
    forfeited: Sequence[bool],
    voided: bool,
    reason: str,
) -> pb.RefereeMessage:
    """The MatchEnded event."""
    msg = pb.RefereeMessage()
    ev = msg.match_ended
    ev.match_id, ev.voided, ev.reason = match_id, voided, reason
    ev.scores.extend(scores)
    ev.ranks.extend(ranks)
    ev.forfeited.extend(forfeited)
    return msg


def fault_charged(
    *,
    match_id: str,
    seat: int,
    kind: str,
    detail: str,
    request_id: int,
    fallback: str,
    faults: int,
    forfeited: bool,
) -> pb.RefereeMessage:
    """The FaultCharged event."""
    msg = pb.RefereeMessage()
    msg.fault.CopyFrom(
        pb.FaultCharged(
            match_id=match_id,
            seat=seat,
            kind=kind,
            detail=detail,
            request_id=request_id,
            fallback_action_id=fallback,
            faults=faults,
            forfeited=forfeited,
        )
    )
    return msg


def welcome(bot_name: str, server_version: str) -> pb.RefereeMessage:
    """The Welcome answer to a good Hello."""
    return pb.RefereeMessage(
        welcome=pb.Welcome(
            bot_name=bot_name, protocol_version=PROTOCOL_VERSION, server_version=server_version
        )
    )
