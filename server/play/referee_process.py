"""One referee process of a tournament run: its own referee and bots, matches from the run.

`python -m server.play.referee_process FD`: FD is this end of a socket pair to the run
(server/play/referee_pool.py). The process starts its managed bots, plays the matches the run
sends, and sends back each record, the live snapshots, timeouts, its loop lag and the bots
that stopped. It never writes the database: the run does. When the run's end of the socket
closes (the run ended, or was killed), it stops its bots and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from server.bots.code import place_code
from server.bots.cpu_pin import claim_cpu, pin_process
from server.bots.process import ManagedBot
from server.bots.start import BotToStart
from server.play.arena import TOURNAMENT_STOPPED, Arena
from server.play.heap import frozen_heap
from server.play.preflight import start_managed, wrong_game
from server.play.publish import LivePublisher
from server.play.referee_wire import (
    BotExited,
    Lag,
    Live,
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
from server.play.tournament import code_cache

LAG_REPORT_S = 0.25  # how often the run hears this process's loop lag


class ChannelSink:
    """Live snapshots sent to the run, which writes them (a LiveSink)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def publish_live(self, match_id: int, step: int, data: dict[str, Any]) -> None:
        """Send the match's snapshot."""
        send(self.writer, Live(match_id, step, data))

    def clear_live(self, match_id: int) -> None:
        """Send the snapshot's removal."""
        send(self.writer, Live(match_id, -1))


def _done(call: Any, *args: Any) -> asyncio.Future[Any]:
    """A LivePublisher's write: the sink only queues bytes, so it is done at once."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    future.set_result(call(*args))
    return future


class RefereeProcess:
    """This process's arena, its bots, and the matches in play."""

    def __init__(self, setup: Setup, arena: Arena, writer: asyncio.StreamWriter) -> None:
        self.setup = setup
        self.arena = arena
        self.writer = writer
        self.sink = ChannelSink(writer)
        self.started: list[ManagedBot] = []
        self.playing: set[asyncio.Task[None]] = set()

    async def start_bots(self) -> None:
        """Unpack stored code, start every bot, wait for their Hellos; tell the run."""
        setup = self.setup
        bots = [BotToStart(b.name, b.bot_id, b.command, digest=b.digest) for b in setup.bots]
        placed, refused = await place_code(bots, code_cache(self.arena), setup.archives.get)
        preflight = await start_managed(
            self.arena, placed, setup.no_show_s, Path(setup.log_dir)
        )
        self.started.extend(preflight.started)
        seated = [(b.name, b.bot_id) for b in placed]
        failures = [*refused, *preflight.failures, *wrong_game(self.arena, seated, setup.game)]
        send(self.writer, Ready(tuple(failures)))
        await self.writer.drain()

    def play(self, message: Play) -> None:
        """Play a match in the background; its record goes to the run when it ends."""
        task = asyncio.create_task(self._play(message))
        self.playing.add(task)
        task.add_done_callback(self.playing.discard)

    async def _play(self, message: Play) -> None:
        publisher = LivePublisher(self.sink, int(message.match_id), _done)
        publisher.start()
        try:
            record = await self.arena.play(
                message.game,
                list(message.seats),
                seed=message.seed,
                options=message.options,
                clock=message.clock,
                match_id=message.match_id,
            )
        finally:
            await publisher.stop()
        send(self.writer, Result(message.match_id, record.to_json()))
        await self.writer.drain()

    async def report_lag(self) -> None:
        """Send the loop's p90 lag every LAG_REPORT_S (the run sizes its matches by it)."""
        lag = self.arena.hub.lag
        while True:
            await asyncio.sleep(LAG_REPORT_S)
            send(self.writer, Lag(lag.percentile(0.9, clear=True)))

    def exited(self, bot: ManagedBot) -> None:
        """Tell the run a bot stopped running."""
        log = None if bot.log_path is None else str(bot.log_path)
        send(self.writer, BotExited(bot.name, bot.exit_description(), log))

    async def serve(self, reader: asyncio.StreamReader) -> str:
        """Follow the run's messages until Stop or the end of the stream; the Goodbye reason."""
        while True:
            message = await receive(reader)
            if message is None:
                return TOURNAMENT_STOPPED
            if isinstance(message, Play):
                self.play(message)
            elif isinstance(message, MarkGone):
                self.arena.hub.mark_gone(message.bot_id, message.reason)
            elif isinstance(message, Stop):
                return message.reason


async def run(fd: int) -> None:
    """Serve the run on descriptor fd until it says Stop or goes away."""
    control = socket.socket(fileno=fd)
    control.set_inheritable(False)  # the bots this process starts never hold the run's channel
    reader, writer = await asyncio.open_connection(sock=control)
    setup = await receive(reader)
    if not isinstance(setup, Setup):
        return
    if setup.cpu is not None:
        claim = claim_cpu(setup.cpu)  # held for the process's life: workers take other cores
        assert claim is not None
        pin_process(setup.cpu)
    arena = Arena(
        setup.log_dir, sandbox=setup.sandbox, cpu_clocks=setup.cpu_clocks, transport=setup.transport
    )
    async with arena:
        referee = RefereeProcess(setup, arena, writer)
        arena.exit_listeners.append(referee.exited)
        stop_listening = arena.hub.listen(
            on_timeout=lambda bot_id: send(writer, TimedOut(bot_id))
        )
        lag = asyncio.create_task(referee.report_lag())
        reason = TOURNAMENT_STOPPED
        try:
            await referee.start_bots()
            with frozen_heap():
                reason = await referee.serve(reader)
        finally:
            lag.cancel()
            stop_listening()
            for task in referee.playing:
                task.cancel()
            await asyncio.gather(*referee.playing, return_exceptions=True)
            await arena.stop_bots(referee.started, reason)
    with contextlib.suppress(ConnectionError):
        writer.close()
        await writer.wait_closed()


def main() -> None:
    """The referee process's entry point: `python -m server.play.referee_process FD`."""
    # Ctrl-C reaches the whole process group: the run decides what stops, and tells us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(run(int(sys.argv[1])))


if __name__ == "__main__":
    main()
