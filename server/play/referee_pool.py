"""A tournament run's referee processes: one per core, each with its own referee and bots.

One Python process referees on one core; a run with `--processes N` starts N referee
processes (server/play/referee_process.py), each pinned with its bots to a core, and plays
each match in the one with the fewest in flight. The run stays the only writer of the
database: it starts and voids attempts, commits results in schedule order and publishes the
live snapshots the processes send. A referee process that dies (kill -9, a crash) voids
the matches it was playing; they are played again in its replacement, never rated twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.bots.cpu_pin import usable_cpus
from server.bots.sandbox import SandboxPolicy
from server.bots.start import StartFailure
from server.match.records import ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.load import cores
from server.play.referee_wire import (
    BotExited,
    Lag,
    Live,
    ManagedEntrant,
    MarkGone,
    Play,
    Ready,
    Result,
    Setup,
    Stop,
    TimedOut,
    receive,
    send,
)
from tournaments.errors import TournamentError

# A referee process starts its own copy of every managed bot (about a second, sandboxed):
# by default a run gets another process for every this many matches, up to one per core.
MATCHES_PER_PROCESS = 200
STOP_WAIT_S = 10.0  # a referee process told Stop has this long to say Goodbye and exit
MAX_REPLACEMENTS = 3  # referee processes that died in one run before the run gives up


@dataclass
class PoolEvents:
    """What the run hears from its referee processes."""

    live: Callable[[Live], None]
    timed_out: Callable[[str], None]
    bot_exited: Callable[[str, str, Path | None], None]


def auto_processes(matches: int) -> int:
    """Referee processes for a run of this many matches when none are asked for: one per
    core, as many as the run is long enough to pay for (at least one)."""
    return max(1, min(cores(), matches // MATCHES_PER_PROCESS))


def ended(returncode: int | None) -> str:
    """How a process ended, in words."""
    if returncode is None:
        return "closed its channel"
    if returncode < 0:
        return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


@dataclass
class RefereeChild:
    """One referee process as the run sees it."""

    setup: Setup
    events: PoolEvents
    process: asyncio.subprocess.Process | None = None
    in_flight: dict[str, tuple[Play, asyncio.Future[MatchRecord]]] = field(default_factory=dict)
    played: int = 0
    lag: float = 0.0
    alive: bool = False
    _writer: asyncio.StreamWriter | None = None
    _reader_task: asyncio.Task[None] | None = None
    _ready: asyncio.Future[Ready] | None = None

    async def start(self) -> list[StartFailure]:
        """Start the process and its bots; the bots that failed to start."""
        ours, theirs = socket.socketpair()
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.play.referee_process",
                str(theirs.fileno()),
                pass_fds=(theirs.fileno(),),
                stdin=asyncio.subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        reader, self._writer = await asyncio.open_connection(sock=ours)
        self._ready = asyncio.get_running_loop().create_future()
        self.alive = True
        self._reader_task = asyncio.create_task(self._read(reader))
        send(self._writer, self.setup)
        await self._writer.drain()
        ready = await self._ready
        return list(ready.failures)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while (message := await receive(reader)) is not None:
            if isinstance(message, Result):
                _, future = self.in_flight.pop(message.match_id, (None, None))
                self.played += 1
                if future is not None and not future.done():
                    future.set_result(MatchRecord.from_json(message.record))
            elif isinstance(message, Live):
                self.events.live(message)
            elif isinstance(message, TimedOut):
                self.events.timed_out(message.bot_id)
            elif isinstance(message, Lag):
                self.lag = message.p90
            elif isinstance(message, BotExited):
                log = None if message.log_path is None else Path(message.log_path)
                self.events.bot_exited(message.name, message.how, log)
            elif isinstance(message, Ready) and self._ready is not None:
                self._ready.set_result(message)
        await self._died()

    async def _died(self) -> None:
        """The channel closed: every match in play here is void (a server failure)."""
        self.alive = False
        returncode = await self.process.wait() if self.process is not None else None
        why = f"referee process {self.setup.index} {ended(returncode)}"
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(TournamentError(f"{why} before its bots started"))
        for play, future in self.in_flight.values():
            if not future.done():
                future.set_result(void_record(play, f"server error: {why} mid-match"))
        self.in_flight.clear()

    async def play(self, message: Play) -> MatchRecord:
        """Play one match attempt here; a void record if this process dies meanwhile."""
        if not self.alive or self._writer is None:
            return void_record(message, f"referee process {self.setup.index} is not running")
        future: asyncio.Future[MatchRecord] = asyncio.get_running_loop().create_future()
        self.in_flight[message.match_id] = (message, future)
        send(self._writer, message)
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
        return await future

    def mark_gone(self, bot_id: str, reason: str) -> None:
        """Make a bot's seats here no-shows at once."""
        if self.alive and self._writer is not None:
            send(self._writer, MarkGone(bot_id, reason))

    async def stop(self, reason: str) -> None:
        """Tell the process Stop (its bots are told Goodbye) and wait for it to exit."""
        if self.process is None:
            return
        if self.alive and self._writer is not None:
            with contextlib.suppress(ConnectionError):
                send(self._writer, Stop(reason))
                await self._writer.drain()
        try:
            await asyncio.wait_for(self.process.wait(), STOP_WAIT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        finally:
            if self._writer is not None:
                self._writer.close()
            if self._reader_task is not None:
                await asyncio.gather(self._reader_task, return_exceptions=True)


def void_record(play: Play, reason: str) -> MatchRecord:
    """The record of an attempt the server failed: void, never rated."""
    seats = [b.bot_id for b in play.seats]
    return MatchRecord(
        play.match_id,
        play.game,
        dict(play.options),
        play.seed,
        seats,
        status="voided",
        reason=reason,
    )


def core_of(index: int, processes: int) -> int | None:
    """The core referee process `index` is pinned to; None when there is nothing to spread
    (one process, or one core)."""
    cpus = usable_cpus()
    if processes < 2 or len(cpus) < 2:
        return None
    return cpus[index % len(cpus)]


@dataclass
class PoolPlan:
    """What every referee process of a run is given."""

    game: str
    bots: tuple[ManagedEntrant, ...]
    archives: dict[str, bytes]
    log_dir: Path
    sandbox: SandboxPolicy
    cpu_clocks: bool
    transport: str
    no_show_s: float

    def setup(self, index: int, processes: int) -> Setup:
        """Referee process index's setup (its logs in a directory of its own past the first)."""
        logs = self.log_dir if index == 0 else self.log_dir / f"referee-{index}"
        return Setup(
            index,
            self.game,
            self.bots,
            self.archives,
            str(logs),
            self.sandbox,
            self.cpu_clocks,
            self.transport,
            self.no_show_s,
            core_of(index, processes),
        )


class RefereePool:
    """A run's referee processes, seen as one referee: `play` picks the least busy."""

    publishes_live = True  # the processes send their matches' snapshots (PoolEvents.live)

    def __init__(self, plan: PoolPlan, processes: int, events: PoolEvents) -> None:
        self.plan = plan
        self.events = events
        self.children = [
            RefereeChild(plan.setup(i, processes), events) for i in range(processes)
        ]
        self.replaced = 0
        self.gone: dict[str, str] = {}  # bots marked gone: told to every replacement too
        self._replacing: dict[int, asyncio.Task[None]] = {}
        self._failure: BaseException | None = None  # a replacement that failed: the run stops

    async def start(self) -> list[StartFailure]:
        """Start every referee process; the bots that failed in any (each named once)."""
        results = await asyncio.gather(
            *(child.start() for child in self.children), return_exceptions=True
        )
        failures: dict[str, StartFailure] = {}
        for result in results:
            if isinstance(result, BaseException):
                raise result
            for failure in result:
                failures.setdefault(failure.bot_id, failure)
        return list(failures.values())

    def mark_gone(self, bot_id: str, reason: str) -> None:
        """A bot that will not play: a no-show at once in every referee process."""
        self.gone[bot_id] = reason
        for child in self.children:
            child.mark_gone(bot_id, reason)

    @property
    def lag(self) -> float:
        """The worst recent p90 loop lag among the processes."""
        return max((c.lag for c in self.children if c.alive), default=0.0)

    @property
    def played(self) -> list[int]:
        """Match attempts each referee process has played in this run."""
        return [c.played for c in self.children]

    async def play(
        self,
        game_name: str,
        bots: Sequence[BotIdentity],
        seed: int,
        options: Mapping[str, Any] | None = None,
        clock: ClockSettings | None = None,
        match_id: str | None = None,
    ) -> MatchRecord:
        """Play one match attempt in the referee process with the fewest in flight."""
        assert match_id is not None, "a run's matches have ids"
        message = Play(
            match_id, game_name, tuple(bots), seed, dict(options or {}), clock or ClockSettings()
        )
        child = await self._pick()
        return await child.play(message)

    async def _pick(self) -> RefereeChild:
        if self._failure is not None:
            raise self._failure
        for index, child in enumerate(self.children):
            if not child.alive and index not in self._replacing:
                self._replacing[index] = asyncio.create_task(self._replace(index))
        alive = [c for c in self.children if c.alive]
        if not alive:
            await asyncio.gather(*self._replacing.values())
            alive = [c for c in self.children if c.alive]
        return min(alive, key=lambda c: len(c.in_flight))

    async def _replace(self, index: int) -> None:
        """Start a new referee process in place of a dead one."""
        try:
            self.replaced += 1
            dead = self.children[index]
            if self.replaced > MAX_REPLACEMENTS:
                raise TournamentError(
                    f"referee processes died {self.replaced} times in this run (the last: "
                    f"{ended(dead.process.returncode if dead.process else None)}); stopping"
                )
            child = RefereeChild(dead.setup, self.events, played=dead.played)
            failures = await child.start()
            self.children[index] = child
            for failure in failures:
                self.events.bot_exited(failure.name, failure.reason, failure.log_path)
                child.mark_gone(failure.bot_id, failure.reason)
            for bot_id, reason in self.gone.items():
                child.mark_gone(bot_id, reason)
        except Exception as exc:
            self._failure = exc
            raise
        finally:
            del self._replacing[index]

    async def stop(self, reason: str) -> None:
        """Stop every referee process and its bots."""
        for task in self._replacing.values():
            task.cancel()
        await asyncio.gather(
            *(child.stop(reason) for child in self.children), return_exceptions=True
        )
