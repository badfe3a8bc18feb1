from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KnavesView(_message.Message):
    __slots__ = ("seat", "dealer", "hand_number", "hand", "turned", "trump", "leader", "trick", "tricks", "tricks_won", "penalties", "scores", "to_act")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TURNED_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    PENALTIES_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dealer: int
    hand_number: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    turned: str
    trump: str
    leader: int
    trick: _containers.RepeatedScalarFieldContainer[str]
    tricks: _containers.RepeatedCompositeFieldContainer[KnavesTrick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    penalties: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    def __init__(self, seat: _Optional[int] = ..., dealer: _Optional[int] = ..., hand_number: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., turned: _Optional[str] = ..., trump: _Optional[str] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[str]] = ..., tricks: _Optional[_Iterable[_Union[KnavesTrick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., penalties: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ...) -> None: ...

class KnavesTrick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ...) -> None: ...
