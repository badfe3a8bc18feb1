from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KillView(_message.Message):
    __slots__ = ("seat", "starter", "hand_number", "scores", "to_act", "turn", "phase", "hand", "drawn", "draw_only", "active", "immune", "hand_sizes", "deck_size", "used_size", "turns", "round_points", "out", "events")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    DRAW_ONLY_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IMMUNE_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    USED_SIZE_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    ROUND_POINTS_FIELD_NUMBER: _ClassVar[int]
    OUT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    starter: int
    hand_number: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    turn: int
    phase: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    drawn: str
    draw_only: bool
    active: _containers.RepeatedScalarFieldContainer[bool]
    immune: _containers.RepeatedScalarFieldContainer[bool]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    deck_size: int
    used_size: int
    turns: int
    round_points: _containers.RepeatedScalarFieldContainer[int]
    out: _containers.RepeatedCompositeFieldContainer[KillCards]
    events: _containers.RepeatedCompositeFieldContainer[KillEvent]
    def __init__(self, seat: _Optional[int] = ..., starter: _Optional[int] = ..., hand_number: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ..., turn: _Optional[int] = ..., phase: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., drawn: _Optional[str] = ..., draw_only: _Optional[bool] = ..., active: _Optional[_Iterable[bool]] = ..., immune: _Optional[_Iterable[bool]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., deck_size: _Optional[int] = ..., used_size: _Optional[int] = ..., turns: _Optional[int] = ..., round_points: _Optional[_Iterable[int]] = ..., out: _Optional[_Iterable[_Union[KillCards, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[KillEvent, _Mapping]]] = ...) -> None: ...

class KillCards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class KillEvent(_message.Message):
    __slots__ = ("kind", "seat", "card", "cards", "target", "secret", "points", "success", "count")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    seat: int
    card: str
    cards: _containers.RepeatedScalarFieldContainer[str]
    target: int
    secret: str
    points: int
    success: bool
    count: int
    def __init__(self, kind: _Optional[str] = ..., seat: _Optional[int] = ..., card: _Optional[str] = ..., cards: _Optional[_Iterable[str]] = ..., target: _Optional[int] = ..., secret: _Optional[str] = ..., points: _Optional[int] = ..., success: _Optional[bool] = ..., count: _Optional[int] = ...) -> None: ...
