from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitHeader(_message.Message):
    __slots__ = ("name", "games", "command", "build")
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    name: str
    games: _containers.RepeatedScalarFieldContainer[str]
    command: str
    build: str
    def __init__(self, name: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., command: _Optional[str] = ..., build: _Optional[str] = ...) -> None: ...

class SubmitChunk(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: SubmitHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[SubmitHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class Submission(_message.Message):
    __slots__ = ("id", "name", "version", "state", "detail", "digest", "games", "created", "updated")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    version: int
    state: str
    detail: str
    digest: str
    games: _containers.RepeatedScalarFieldContainer[str]
    created: str
    updated: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., state: _Optional[str] = ..., detail: _Optional[str] = ..., digest: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., created: _Optional[str] = ..., updated: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("submission_id",)
    SUBMISSION_ID_FIELD_NUMBER: _ClassVar[int]
    submission_id: int
    def __init__(self, submission_id: _Optional[int] = ...) -> None: ...

class ListMineRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MyBot(_message.Message):
    __slots__ = ("name", "version", "retired", "created")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    retired: bool
    created: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., retired: _Optional[bool] = ..., created: _Optional[str] = ...) -> None: ...

class ListMineResponse(_message.Message):
    __slots__ = ("bots", "submissions")
    BOTS_FIELD_NUMBER: _ClassVar[int]
    SUBMISSIONS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[MyBot]
    submissions: _containers.RepeatedCompositeFieldContainer[Submission]
    def __init__(self, bots: _Optional[_Iterable[_Union[MyBot, _Mapping]]] = ..., submissions: _Optional[_Iterable[_Union[Submission, _Mapping]]] = ...) -> None: ...

class RetireRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RetireResponse(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: str
    def __init__(self, outcome: _Optional[str] = ...) -> None: ...

class MatchLogRequest(_message.Message):
    __slots__ = ("match_id", "bot")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    bot: str
    def __init__(self, match_id: _Optional[int] = ..., bot: _Optional[str] = ...) -> None: ...

class MatchLogResponse(_message.Message):
    __slots__ = ("match_id", "bot", "game", "status", "seats", "scores", "faults", "stderr")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    match_id: int
    bot: str
    game: str
    status: str
    seats: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedScalarFieldContainer[str]
    stderr: str
    def __init__(self, match_id: _Optional[int] = ..., bot: _Optional[str] = ..., game: _Optional[str] = ..., status: _Optional[str] = ..., seats: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[str]] = ..., stderr: _Optional[str] = ...) -> None: ...
