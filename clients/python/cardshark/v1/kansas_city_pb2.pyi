from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KansasCityView(_message.Message):
    __slots__ = ("seat", "dealer", "hand_number", "hands_in_match", "numbers_public", "phase", "hand", "trumps", "passed", "received", "missing", "players", "held_trumps", "passes", "leader", "led", "trick", "tricks", "tricks_won", "fours", "results", "scores", "to_act")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HANDS_IN_MATCH_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_PUBLIC_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TRUMPS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    HELD_TRUMPS_FIELD_NUMBER: _ClassVar[int]
    PASSES_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    LED_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    FOURS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dealer: int
    hand_number: int
    hands_in_match: int
    numbers_public: bool
    phase: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    trumps: _containers.RepeatedScalarFieldContainer[str]
    passed: _containers.RepeatedScalarFieldContainer[str]
    received: _containers.RepeatedScalarFieldContainer[str]
    missing: str
    players: _containers.RepeatedCompositeFieldContainer[KansasCityPlayer]
    held_trumps: _containers.RepeatedScalarFieldContainer[int]
    passes: _containers.RepeatedCompositeFieldContainer[KansasCityPass]
    leader: int
    led: str
    trick: _containers.RepeatedCompositeFieldContainer[KansasCityPlay]
    tricks: _containers.RepeatedCompositeFieldContainer[KansasCityTrick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    fours: _containers.RepeatedScalarFieldContainer[int]
    results: _containers.RepeatedCompositeFieldContainer[KansasCityResult]
    scores: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    def __init__(self, seat: _Optional[int] = ..., dealer: _Optional[int] = ..., hand_number: _Optional[int] = ..., hands_in_match: _Optional[int] = ..., numbers_public: _Optional[bool] = ..., phase: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., trumps: _Optional[_Iterable[str]] = ..., passed: _Optional[_Iterable[str]] = ..., received: _Optional[_Iterable[str]] = ..., missing: _Optional[str] = ..., players: _Optional[_Iterable[_Union[KansasCityPlayer, _Mapping]]] = ..., held_trumps: _Optional[_Iterable[int]] = ..., passes: _Optional[_Iterable[_Union[KansasCityPass, _Mapping]]] = ..., leader: _Optional[int] = ..., led: _Optional[str] = ..., trick: _Optional[_Iterable[_Union[KansasCityPlay, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[KansasCityTrick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., fours: _Optional[_Iterable[int]] = ..., results: _Optional[_Iterable[_Union[KansasCityResult, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ...) -> None: ...

class KansasCityPlayer(_message.Message):
    __slots__ = ("seat", "hand_size", "numbers", "trump_numbers")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_size: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    trump_numbers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., hand_size: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ..., trump_numbers: _Optional[_Iterable[int]] = ...) -> None: ...

class KansasCityPass(_message.Message):
    __slots__ = ("seat", "to_seat", "numbers")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TO_SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    to_seat: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., to_seat: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ...) -> None: ...

class KansasCityPlay(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class KansasCityUpgrade(_message.Message):
    __slots__ = ("seat", "number")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    number: int
    def __init__(self, seat: _Optional[int] = ..., number: _Optional[int] = ...) -> None: ...

class KansasCityTrick(_message.Message):
    __slots__ = ("leader", "plays", "winner", "upgrades")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    UPGRADES_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[KansasCityPlay]
    winner: int
    upgrades: _containers.RepeatedCompositeFieldContainer[KansasCityUpgrade]
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[KansasCityPlay, _Mapping]]] = ..., winner: _Optional[int] = ..., upgrades: _Optional[_Iterable[_Union[KansasCityUpgrade, _Mapping]]] = ...) -> None: ...

class KansasCityResult(_message.Message):
    __slots__ = ("hand_number", "dealer", "tricks_won", "fours", "points")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    FOURS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    fours: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., tricks_won: _Optional[_Iterable[int]] = ..., fours: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...
