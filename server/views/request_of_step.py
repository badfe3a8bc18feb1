"""The DecisionRequest a seat was sent at one decision of a match, rebuilt through its engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from cardshark.v1 import referee_pb2 as pb
from games.registry import get_game
from server.codec import protocol
from server.match.records import Fault, MatchRecord

# A fault with no request id answered no request (a no-show, or a stray message charged to a
# seat the bot holds), except a disconnection: the seat was being asked, its id unrecorded.
ASKED_WITHOUT_ID = ("disconnected",)


@dataclass(frozen=True)
class StepRequest:
    """One decision's request: its index, the seat asked and the message as sent."""

    decision: int
    seat: int
    message: pb.DecisionRequest

    def to_json(self) -> dict[str, Any]:
        """The request in protobuf's JSON mapping with the .proto field names and every field,
        zeros included (as the bridge shows it to a bot: seat 0 is there)."""
        return json_format.MessageToDict(
            self.message,
            preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
        )

    def view(self) -> dict[str, Any]:
        """The game's view in the request, as JSON."""
        field = protocol.view_field(self.message.game)
        view: dict[str, Any] = self.to_json().get(field, {})
        return view

    def legal(self) -> list[str]:
        """The ids of the legal actions offered."""
        return [a.id for a in self.message.legal_actions]


def request_of_step(
    record: MatchRecord,
    decision: int,
    *,
    request_id: int = 0,
    move_ms: int = 0,
    bank_ms: int = 0,
) -> StepRequest | None:
    """The request of a decision (replaying the recorded actions before it), or None when
    the match had ended by then."""
    game = get_game(record.game)
    state = game.replay(record.seed, len(record.seats), record.options, record.actions[:decision])
    seat = game.to_act(state)
    if seat is None:
        return None
    msg = protocol.decision_request(
        game_name=game.spec.name,
        request_id=request_id,
        match_id=record.match_id,
        seat=seat,
        view=game.view(state, seat),
        actions=game.legal_actions(state),
        move_ms=move_ms,
        bank_ms=bank_ms,
        random_seed=protocol.bot_random_seed(record.seed, record.seats, seat),
    )
    return StepRequest(decision, seat, msg.request)


def decision_of_fault(record: MatchRecord, fault: Fault) -> int | None:
    """The decision whose request a fault answered: the latest at or before the fault at which
    its seat was to act (a duplicate may be charged after its answer was played), or None."""
    if fault.request_id == 0 and fault.kind not in ASKED_WITHOUT_ID:
        return None
    game = get_game(record.game)
    state = game.new_match(record.seed, len(record.seats), record.options)
    found = None
    for index, action in enumerate(record.actions[: fault.decision + 1]):
        if game.to_act(state) == fault.seat:
            found = index
        game.apply(state, action)
    if fault.decision >= len(record.actions) and game.to_act(state) == fault.seat:
        found = fault.decision
    return found


def request_of_fault(record: MatchRecord, fault: Fault, move_ms: int = 0) -> StepRequest | None:
    """The request a fault answered, as the bot was sent it, or None when it answered none."""
    decision = decision_of_fault(record, fault)
    if decision is None:
        return None
    return request_of_step(record, decision, request_id=fault.request_id, move_ms=move_ms)
