from cardshark.v1 import kansas_city_pb2 as _kansas_city_pb2
from cardshark.v1 import kill_pb2 as _kill_pb2
from cardshark.v1 import knaves_pb2 as _knaves_pb2
from cardshark.v1 import knives_pb2 as _knives_pb2
from cardshark.v1 import ninja_whist_pb2 as _ninja_whist_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("hello", "decision")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "protocol_version", "games")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    protocol_version: int
    games: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., games: _Optional[_Iterable[str]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action_id", "match_id", "seat")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action_id: str
    match_id: str
    seat: int
    def __init__(self, request_id: _Optional[int] = ..., action_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "request", "match_started", "hand_ended", "match_ended", "fault", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    request: DecisionRequest
    match_started: MatchStarted
    hand_ended: HandEnded
    match_ended: MatchEnded
    fault: FaultCharged
    goodbye: Goodbye
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., fault: _Optional[_Union[FaultCharged, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_name", "protocol_version", "server_version")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    protocol_version: int
    server_version: str
    def __init__(self, bot_name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., server_version: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("id", "kind", "card", "cards", "suit", "number", "seat", "token")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    card: str
    cards: _containers.RepeatedScalarFieldContainer[str]
    suit: str
    number: int
    seat: int
    token: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., card: _Optional[str] = ..., cards: _Optional[_Iterable[str]] = ..., suit: _Optional[str] = ..., number: _Optional[int] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("move_ms", "bank_ms")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    bank_ms: int
    def __init__(self, move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "game", "legal_actions", "clock", "random_seed", "knaves", "kansas_city", "knives", "kill", "ninja_whist")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    RANDOM_SEED_FIELD_NUMBER: _ClassVar[int]
    KNAVES_FIELD_NUMBER: _ClassVar[int]
    KANSAS_CITY_FIELD_NUMBER: _ClassVar[int]
    KNIVES_FIELD_NUMBER: _ClassVar[int]
    KILL_FIELD_NUMBER: _ClassVar[int]
    NINJA_WHIST_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    match_id: str
    seat: int
    game: str
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    clock: Clock
    random_seed: int
    knaves: _knaves_pb2.KnavesView
    kansas_city: _kansas_city_pb2.KansasCityView
    knives: _knives_pb2.KnivesView
    kill: _kill_pb2.KillView
    ninja_whist: _ninja_whist_pb2.NinjaWhistView
    def __init__(self, request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., game: _Optional[str] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ..., random_seed: _Optional[int] = ..., knaves: _Optional[_Union[_knaves_pb2.KnavesView, _Mapping]] = ..., kansas_city: _Optional[_Union[_kansas_city_pb2.KansasCityView, _Mapping]] = ..., knives: _Optional[_Union[_knives_pb2.KnivesView, _Mapping]] = ..., kill: _Optional[_Union[_kill_pb2.KillView, _Mapping]] = ..., ninja_whist: _Optional[_Union[_ninja_whist_pb2.NinjaWhistView, _Mapping]] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "bot_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_name: str
    def __init__(self, seat: _Optional[int] = ..., bot_name: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "game", "options", "seat", "seats", "clock")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    options: _struct_pb2.Struct
    seat: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    clock: Clock
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., seat: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("match_id", "hand_number", "scores", "record")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    hand_number: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    record: _struct_pb2.Struct
    def __init__(self, match_id: _Optional[str] = ..., hand_number: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., record: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "scores", "ranks", "forfeited", "voided", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    VOIDED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[bool]
    voided: bool
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[bool]] = ..., voided: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class FaultCharged(_message.Message):
    __slots__ = ("match_id", "seat", "kind", "detail", "request_id", "fallback_action_id", "faults", "forfeited")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    kind: str
    detail: str
    request_id: int
    fallback_action_id: str
    faults: int
    forfeited: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ..., request_id: _Optional[int] = ..., fallback_action_id: _Optional[str] = ..., faults: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...
