"""A connected bot's session, its open decision requests and what became of them."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol

from cardshark.v1 import referee_pb2 as pb
from server.match.clocks import CpuMeter
from server.match.records import FaultKind

# What a session sends: a message, or one already serialized (a broadcast is encoded once).
Outgoing = pb.RefereeMessage | bytes
ReplyKind = Literal["decision", "fault", "disconnected", "timeout"]
# "cut": its stream dropped before an answer; the referee asks again with a new request.
RequestState = Literal["open", "answered", "timed_out", "cut"]
# Misuses of a token no match is charged with; a stray reply is charged as one of the last two.
IncidentKind = Literal["second_stream", "not_yours", "malformed"]
StrayKind = Literal["not_yours", "malformed"]


@dataclass(frozen=True)
class BotIdentity:
    """A registered bot as the referee knows it."""

    bot_id: str
    name: str
    # The games its Hello said it plays (empty: any); not part of who it is.
    games: tuple[str, ...] = field(default=(), compare=False)


class Reply(NamedTuple):
    """What became of a request: a decision, a fault already detected, or a lost connection."""

    # A tuple, not a frozen dataclass: one is built per decision and frozen init is slow.
    kind: ReplyKind
    action_id: str = ""
    fault_kind: FaultKind | Literal[""] = ""
    detail: str = ""


@dataclass(frozen=True)
class Incident:
    """A misuse of a bot's token that no match was charged with, kept for the organizer."""

    kind: IncidentKind
    detail: str
    at: float  # time.time()
    matches: tuple[str, ...] = ()  # the running matches the bot sat in at the time


class MatchContext(Protocol):
    """The part of a running match the hub may notify."""

    match_id: str

    def charge(
        self, seat: int, kind: FaultKind, detail: str, request_id: int, fallback: str
    ) -> None:
        """Record a fault against a seat."""


@dataclass(eq=False, slots=True)
class PendingRequest:
    """A DecisionRequest sent to a bot and what became of it."""

    request_id: int
    match: MatchContext
    seat: int
    session: BotSession
    future: asyncio.Future[Reply]
    state: RequestState = "open"
    # Set when armed: what the clock stood at, so its deadline charges only the bot's time.
    opened: float = 0.0
    limit: float = 0.0
    cpu_open: float = -1.0  # the bot's CPU seconds then; -1 on a wall clock
    lag_open: float = 0.0
    received_open: int = 0
    answered_open: int = 0

    def resolve(self, reply: Reply) -> None:
        """Settle the request once; later replies are duplicates or late."""
        if self.state == "open" and not self.future.done():
            self.future.set_result(reply)
        self.state = "answered" if self.state == "open" else self.state
        self.session.pending.pop(self.request_id, None)

    def expire(self) -> None:
        """Cut the request off at its deadline: later replies are ignored."""
        if self.state == "open" and not self.future.done():
            self.future.set_result(Reply("timeout"))
            self.state = "timed_out"
            self.session.pending.pop(self.request_id, None)

    def cut(self) -> None:
        """Cut the request off with its stream: a reply to it later, from the bot's new
        stream, answers a question the referee has asked again, and is ignored."""
        if self.state == "open" and not self.future.done():
            self.future.set_result(Reply("disconnected"))
            self.state = "cut"
        self.session.pending.pop(self.request_id, None)


class Outbox:
    """A session's outgoing messages for its one reader: asyncio.Queue's put_nowait and get,
    without the queue's loop lookups on every call (each a getpid call in Python 3.11)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Outgoing | None] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Outgoing | None) -> None:
        """Queue an item and wake the reader."""
        self._items.append(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Outgoing | None:
        """The next item, waiting for one."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._items.popleft()

    def qsize(self) -> int:
        """Items queued."""
        return len(self._items)


@dataclass(eq=False)
class BotSession:
    """One connected stream of one bot."""

    identity: BotIdentity
    outbox: Outbox = field(default_factory=Outbox)
    pending: dict[int, PendingRequest] = field(default_factory=dict)
    closed: bool = False
    meter: CpuMeter | None = None  # a managed bot's CPU time, when its cgroup gives it
    received: int = 0  # messages the bot sent
    answered: int = 0  # of them, valid answers to its own open requests
    malformed: int = 0  # of them, ones that did not parse (or a second Hello)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # set once detached
    # True where send() writes to the socket before it returns; else it is written by the
    # stream's own task, after the sender yields to the loop.
    writes_at_once = False

    def send(self, msg: Outgoing) -> None:
        """Queue a message for the bot (dropped once the stream is closed)."""
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        """End the outgoing stream."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)

    def take_reply(self) -> None:
        """Where the transport can, read what the bot sends next without a turn of the event
        loop, while the loop has nothing else to do; a gRPC stream cannot (nothing happens)."""

    def oldest_open(self) -> PendingRequest | None:
        """The longest-waiting open request of this session, if any."""
        return next(iter(self.pending.values()), None)
