from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KnivesView(_message.Message):
    __slots__ = ("seat", "dealer", "hand_number", "target", "scores", "to_act", "phase", "hand", "declared_suit", "strong_suit", "auction", "mode", "banker", "bank", "banked", "solo_announced", "banker_solo", "shadow", "revealed", "leader", "led_suit", "trick", "tricks", "tricks_won", "stars_won", "results")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DECLARED_SUIT_FIELD_NUMBER: _ClassVar[int]
    STRONG_SUIT_FIELD_NUMBER: _ClassVar[int]
    AUCTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    BANKER_FIELD_NUMBER: _ClassVar[int]
    BANK_FIELD_NUMBER: _ClassVar[int]
    BANKED_FIELD_NUMBER: _ClassVar[int]
    SOLO_ANNOUNCED_FIELD_NUMBER: _ClassVar[int]
    BANKER_SOLO_FIELD_NUMBER: _ClassVar[int]
    SHADOW_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LED_SUIT_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    STARS_WON_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dealer: int
    hand_number: int
    target: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    phase: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    declared_suit: str
    strong_suit: str
    auction: _containers.RepeatedCompositeFieldContainer[KnivesAuctionEntry]
    mode: str
    banker: int
    bank: _containers.RepeatedScalarFieldContainer[str]
    banked: _containers.RepeatedScalarFieldContainer[str]
    solo_announced: bool
    banker_solo: bool
    shadow: int
    revealed: _containers.RepeatedScalarFieldContainer[str]
    leader: int
    led_suit: str
    trick: _containers.RepeatedScalarFieldContainer[str]
    tricks: _containers.RepeatedCompositeFieldContainer[KnivesTrick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    stars_won: _containers.RepeatedScalarFieldContainer[int]
    results: _containers.RepeatedCompositeFieldContainer[KnivesHandResult]
    def __init__(self, seat: _Optional[int] = ..., dealer: _Optional[int] = ..., hand_number: _Optional[int] = ..., target: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ..., phase: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., declared_suit: _Optional[str] = ..., strong_suit: _Optional[str] = ..., auction: _Optional[_Iterable[_Union[KnivesAuctionEntry, _Mapping]]] = ..., mode: _Optional[str] = ..., banker: _Optional[int] = ..., bank: _Optional[_Iterable[str]] = ..., banked: _Optional[_Iterable[str]] = ..., solo_announced: _Optional[bool] = ..., banker_solo: _Optional[bool] = ..., shadow: _Optional[int] = ..., revealed: _Optional[_Iterable[str]] = ..., leader: _Optional[int] = ..., led_suit: _Optional[str] = ..., trick: _Optional[_Iterable[str]] = ..., tricks: _Optional[_Iterable[_Union[KnivesTrick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., stars_won: _Optional[_Iterable[int]] = ..., results: _Optional[_Iterable[_Union[KnivesHandResult, _Mapping]]] = ...) -> None: ...

class KnivesAuctionEntry(_message.Message):
    __slots__ = ("seat", "action", "suit")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: str
    suit: str
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[str] = ..., suit: _Optional[str] = ...) -> None: ...

class KnivesTrick(_message.Message):
    __slots__ = ("leader", "cards", "winner", "next_leader")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    NEXT_LEADER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    next_leader: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ..., next_leader: _Optional[int] = ...) -> None: ...

class KnivesHandResult(_message.Message):
    __slots__ = ("hand_number", "mode", "points")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    mode: str
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., mode: _Optional[str] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...
