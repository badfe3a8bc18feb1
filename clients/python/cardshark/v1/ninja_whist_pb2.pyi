from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NinjaWhistView(_message.Message):
    __slots__ = ("seat", "dealer", "hand_number", "rounds", "cards_dealt", "hand", "turned", "trump", "phase", "bids", "forbidden_bid", "leader", "trick", "tricks", "tricks_won", "play_areas", "score_areas", "score_tokens", "stock_size", "pending_card", "pending_tokens", "scores", "to_act")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    CARDS_DEALT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TURNED_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    FORBIDDEN_BID_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    PLAY_AREAS_FIELD_NUMBER: _ClassVar[int]
    SCORE_AREAS_FIELD_NUMBER: _ClassVar[int]
    SCORE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    PENDING_CARD_FIELD_NUMBER: _ClassVar[int]
    PENDING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dealer: int
    hand_number: int
    rounds: int
    cards_dealt: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    turned: str
    trump: str
    phase: str
    bids: _containers.RepeatedScalarFieldContainer[int]
    forbidden_bid: int
    leader: int
    trick: _containers.RepeatedCompositeFieldContainer[NinjaWhistPlay]
    tricks: _containers.RepeatedCompositeFieldContainer[NinjaWhistTrick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    play_areas: _containers.RepeatedCompositeFieldContainer[NinjaWhistTokenArea]
    score_areas: _containers.RepeatedCompositeFieldContainer[NinjaWhistTokenArea]
    score_tokens: _containers.RepeatedScalarFieldContainer[int]
    stock_size: int
    pending_card: str
    pending_tokens: _containers.RepeatedScalarFieldContainer[str]
    scores: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    def __init__(self, seat: _Optional[int] = ..., dealer: _Optional[int] = ..., hand_number: _Optional[int] = ..., rounds: _Optional[int] = ..., cards_dealt: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., turned: _Optional[str] = ..., trump: _Optional[str] = ..., phase: _Optional[str] = ..., bids: _Optional[_Iterable[int]] = ..., forbidden_bid: _Optional[int] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[NinjaWhistPlay, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[NinjaWhistTrick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., play_areas: _Optional[_Iterable[_Union[NinjaWhistTokenArea, _Mapping]]] = ..., score_areas: _Optional[_Iterable[_Union[NinjaWhistTokenArea, _Mapping]]] = ..., score_tokens: _Optional[_Iterable[int]] = ..., stock_size: _Optional[int] = ..., pending_card: _Optional[str] = ..., pending_tokens: _Optional[_Iterable[str]] = ..., scores: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ...) -> None: ...

class NinjaWhistPlay(_message.Message):
    __slots__ = ("seat", "card", "tokens", "boost")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    BOOST_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    tokens: _containers.RepeatedScalarFieldContainer[str]
    boost: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., tokens: _Optional[_Iterable[str]] = ..., boost: _Optional[int] = ...) -> None: ...

class NinjaWhistTrick(_message.Message):
    __slots__ = ("leader", "plays", "winner", "token", "taken_from")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FROM_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[NinjaWhistPlay]
    winner: int
    token: str
    taken_from: int
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[NinjaWhistPlay, _Mapping]]] = ..., winner: _Optional[int] = ..., token: _Optional[str] = ..., taken_from: _Optional[int] = ...) -> None: ...

class NinjaWhistTokenArea(_message.Message):
    __slots__ = ("tokens",)
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tokens: _Optional[_Iterable[str]] = ...) -> None: ...
