from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotInfo(_message.Message):
    __slots__ = ("id", "name", "command", "created")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    command: str
    created: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., command: _Optional[str] = ..., created: _Optional[str] = ...) -> None: ...

class AddBotRequest(_message.Message):
    __slots__ = ("name", "command")
    NAME_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    name: str
    command: str
    def __init__(self, name: _Optional[str] = ..., command: _Optional[str] = ...) -> None: ...

class AddBotResponse(_message.Message):
    __slots__ = ("bot", "token")
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot: BotInfo
    token: str
    def __init__(self, bot: _Optional[_Union[BotInfo, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class RemoveBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RemoveBotResponse(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: str
    def __init__(self, outcome: _Optional[str] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GameInfo(_message.Message):
    __slots__ = ("name", "title", "seat_counts", "default_seats", "move_ms", "options")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNTS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SEATS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    title: str
    seat_counts: _containers.RepeatedScalarFieldContainer[int]
    default_seats: int
    move_ms: int
    options: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., title: _Optional[str] = ..., seat_counts: _Optional[_Iterable[int]] = ..., default_seats: _Optional[int] = ..., move_ms: _Optional[int] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameInfo]
    def __init__(self, games: _Optional[_Iterable[_Union[GameInfo, _Mapping]]] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("game", "bots", "rounds", "tables", "seats", "options", "move_ms", "bank_ms", "seed", "format")
    GAME_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    game: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    rounds: int
    tables: int
    seats: int
    options: _struct_pb2.Struct
    move_ms: int
    bank_ms: int
    seed: int
    format: str
    def __init__(self, game: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., rounds: _Optional[int] = ..., tables: _Optional[int] = ..., seats: _Optional[int] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., seed: _Optional[int] = ..., format: _Optional[str] = ...) -> None: ...

class CreateTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: TournamentProgress
    def __init__(self, tournament: _Optional[_Union[TournamentProgress, _Mapping]] = ...) -> None: ...

class RunTournamentRequest(_message.Message):
    __slots__ = ("tournament_id", "concurrency")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    tournament_id: int
    concurrency: int
    def __init__(self, tournament_id: _Optional[int] = ..., concurrency: _Optional[int] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: int
    def __init__(self, tournament_id: _Optional[int] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: int
    def __init__(self, tournament_id: _Optional[int] = ...) -> None: ...

class TournamentProgress(_message.Message):
    __slots__ = ("tournament_id", "game", "status", "finished", "scheduled", "last_match_id")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    LAST_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: int
    game: str
    status: str
    finished: int
    scheduled: int
    last_match_id: int
    def __init__(self, tournament_id: _Optional[int] = ..., game: _Optional[str] = ..., status: _Optional[str] = ..., finished: _Optional[int] = ..., scheduled: _Optional[int] = ..., last_match_id: _Optional[int] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[TournamentProgress]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[TournamentProgress, _Mapping]]] = ...) -> None: ...

class GetRankingsRequest(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: str
    def __init__(self, game: _Optional[str] = ...) -> None: ...

class RankingRow(_message.Message):
    __slots__ = ("rank", "bot", "mu", "sigma", "conservative", "matches", "mean_score", "faults")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    mean_score: float
    faults: int
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., conservative: _Optional[float] = ..., matches: _Optional[int] = ..., mean_score: _Optional[float] = ..., faults: _Optional[int] = ...) -> None: ...

class GetRankingsResponse(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[RankingRow]
    def __init__(self, rows: _Optional[_Iterable[_Union[RankingRow, _Mapping]]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    def __init__(self, match_id: _Optional[int] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match_id", "tournament_id", "status", "seats", "result", "record")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    tournament_id: int
    status: str
    seats: _containers.RepeatedScalarFieldContainer[str]
    result: _struct_pb2.Struct
    record: _struct_pb2.Struct
    def __init__(self, match_id: _Optional[int] = ..., tournament_id: _Optional[int] = ..., status: _Optional[str] = ..., seats: _Optional[_Iterable[str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., record: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
