"""What a tournament run and its referee processes say to each other, and how it is framed.

Both ends are this server's own code, started by the run over a socket pair that no bot
holds (bots are started by the child with no descriptor but their own), so messages are
pickled dataclasses: the setup carries a SandboxPolicy and the stored code as they are.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from dataclasses import dataclass, field
from typing import Any

from server.bots.sandbox import SandboxPolicy
from server.bots.start import StartFailure
from server.match.records import ClockSettings
from server.match.sessions import BotIdentity

_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class ManagedEntrant:
    """A managed bot a referee process starts: name, stored id, command, code digest."""

    name: str
    bot_id: str
    command: str
    digest: str | None = None


@dataclass(frozen=True)
class Setup:
    """Everything a referee process needs before its first match (the first message)."""

    index: int  # which of the run's referee processes this is, from 0
    game: str
    bots: tuple[ManagedEntrant, ...]
    archives: dict[str, bytes]  # stored code by digest (the child never opens the database)
    log_dir: str
    sandbox: SandboxPolicy
    cpu_clocks: bool
    transport: str
    no_show_s: float
    cpu: int | None  # the core it and its bots run on; None: any


@dataclass(frozen=True)
class Ready:
    """The referee process started its bots: those that failed, and why."""

    failures: tuple[StartFailure, ...]


@dataclass(frozen=True)
class Play:
    """Play one match attempt."""

    match_id: str
    game: str
    seats: tuple[BotIdentity, ...]
    seed: int
    options: dict[str, Any]
    clock: ClockSettings


@dataclass(frozen=True)
class Result:
    """A match attempt's record (MatchRecord.to_json)."""

    match_id: str
    record: dict[str, Any]


@dataclass(frozen=True)
class Live:
    """A match's public snapshot to publish (step -1: remove it)."""

    match_id: int
    step: int
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TimedOut:
    """A bot was cut off at a deadline (for the run's storm watch)."""

    bot_id: str


@dataclass(frozen=True)
class Lag:
    """The referee process's recent p90 loop lag, in seconds."""

    p90: float


@dataclass(frozen=True)
class BotExited:
    """A managed bot's process ended before the referee process stopped it."""

    name: str
    how: str
    log_path: str | None


@dataclass(frozen=True)
class MarkGone:
    """A bot will not play (it failed to start elsewhere): its seats are no-shows at once."""

    bot_id: str
    reason: str


@dataclass(frozen=True)
class Stop:
    """Tell the bots Goodbye with this reason, stop them, and exit."""

    reason: str


def send(writer: asyncio.StreamWriter, message: object) -> None:
    """Queue one message on the stream (the caller drains when it must wait)."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(_LENGTH.pack(len(body)) + body)


async def receive(reader: asyncio.StreamReader) -> object | None:
    """The next message, or None at the end of the stream (the other end is gone)."""
    try:
        head = await reader.readexactly(_LENGTH.size)
        (size,) = _LENGTH.unpack(head)
        body = await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    message: object = pickle.loads(body)
    return message
