"""The stdio bridge: plays a bot written in any language that reads and writes JSON lines.

    python -m cardshark_bot.bridge [--server HOST:PORT] [--token TOKEN] -- COMMAND [ARG...]

The bridge dials the server like any bot (CARDSHARK_SERVER / CARDSHARK_TOKEN, or the flags;
HOST:PORT or unix:/PATH; with --tls-ca CA or CARDSHARK_TLS_CA over TLS, plus --tls-cert and
--tls-key for mutual TLS; or fd:N, the local transport of a bridge the server started as a
managed bot: frames on descriptor N, which the bot process does not inherit), starts
COMMAND, and speaks with it one JSON object per line (protobuf's JSON mapping with the .proto
field names, every field present, so seat 0 reads "seat": 0; docs/protocol.md, section 8.1):

- to the bot's stdin: every RefereeMessage the server sends, requests and events alike, e.g.
  ``{"request": {"request_id": 5, "legal_actions": [{"id": "play:QH", ...}], ...}}`` or
  ``{"match_ended": {...}}``;
- from the bot's stdout: one Decision per request, ``{"request_id": 5, "action_id": "play:QH"}``,
  in any order. Blank lines are ignored; the bot's stderr passes through.

A line that is not a Decision answers the oldest open request with an empty action id (the
server charges ``malformed``); a Decision for a request that is not open is forwarded as it is
(the server judges it). A slow bot is cut off by the server (``timeout``). When the bot exits,
the bridge exits too, with a one-line message and a non-zero code; the dropped stream costs
the bot its seat after the grace period (``disconnected``).

When the server says Goodbye (``{"goodbye": {"reason": "tournament finished"}}``, the last
line the bot reads), the bridge closes the bot's stdin, prints one line saying so, and exits
with code 0 once the bot has exited (a bot still running 2 s after its stdin closed is sent
SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.client import (
    DEFAULT_SERVER,
    BotClient,
    BotRefused,
    Pem,
    add_tls_arguments,
    channel_credentials,
    gave_up_line,
    goodbye_line,
    tls_error,
)

LINE_LIMIT = 1 << 20  # longest line read from the bot
STOP_GRACE_S = 2.0  # after its stdin closes, a bot gets this long to exit before SIGTERM


def _say(message: str) -> None:
    print(f"cardshark bridge: {message}", file=sys.stderr, flush=True)


def _shorten(data: bytes, limit: int = 80) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "…"


def parse_decision(line: bytes) -> pb.Decision | None:
    """A line of the bot's output as a Decision, or None when it is not one."""
    try:
        return json_format.Parse(line.decode("utf-8"), pb.Decision())
    except Exception:  # ParseError, bad UTF-8, JSON that is not an object: all junk
        return None


def whole_numbers_as_ints(value: Any) -> Any:
    """value with every float that is a whole number made an int, at any depth."""
    # A Struct (MatchStarted.options, HandEnded.record) holds every number as a double, so
    # a game's 3 would reach the bot as 3.0. The RefereeMessage has no float or double field
    # of its own: every float in its JSON came from a Struct, and every whole one was an int.
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: whole_numbers_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers_as_ints(item) for item in value]
    return value


def to_json_line(msg: pb.RefereeMessage) -> bytes:
    """One RefereeMessage as the JSON line the bot reads: every field, whole numbers as ints."""
    # Without the defaults, seat 0, a trick led or won by seat 0 and every other zero vanish.
    data = json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return json.dumps(whole_numbers_as_ints(data)).encode("utf-8") + b"\n"


class StdioBot:
    """The bot process and its open requests, answered by the lines it writes."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.process: asyncio.subprocess.Process | None = None
        self.client: BotClient | None = None
        self.waiting: dict[int, asyncio.Future[pb.Decision]] = {}

    async def start(self) -> None:
        """Start the process (the kernel kills it if the bridge dies, where setpriv exists)."""
        argv = self.command
        setpriv = shutil.which("setpriv")
        if setpriv:
            argv = [setpriv, "--pdeathsig", "SIGKILL", "--", *argv]
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )

    def _write(self, msg: pb.RefereeMessage) -> bool:
        assert self.process is not None and self.process.stdin is not None
        stdin = self.process.stdin
        if stdin.is_closing():
            return False
        stdin.write(to_json_line(msg))
        return True

    def event(self, msg: pb.RefereeMessage) -> None:
        """Pass an event (welcome, match start/end, hand end, fault) to the bot."""
        self._write(msg)

    async def decide(self, request: pb.DecisionRequest) -> pb.Decision:
        """Send the request to the bot and wait for the line that answers it."""
        rid = request.request_id
        future = self.waiting.get(rid)
        if future is None:  # a request sent again after a reconnect is not asked twice
            future = asyncio.get_running_loop().create_future()
            self.waiting[rid] = future
            if self._write(pb.RefereeMessage(request=request)):
                assert self.process is not None and self.process.stdin is not None
                with contextlib.suppress(ConnectionError):
                    await self.process.stdin.drain()
        return await asyncio.shield(future)

    async def read_answers(self) -> None:
        """Route every line the bot writes until its stdout closes."""
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # longer than LINE_LIMIT; the reader has dropped it
                self.on_line(b"<a line longer than %d bytes>" % LINE_LIMIT)
                continue
            if not line:
                return
            if line.strip():
                self.on_line(line)

    def on_line(self, line: bytes) -> None:
        """Answer the request a line names; junk answers the oldest open one as malformed."""
        decision = parse_decision(line)
        if decision is None:
            if not self.waiting:
                _say(f"ignored a line that is not a Decision (no open request): {_shorten(line)}")
                return
            rid = next(iter(self.waiting))
            _say(f"request {rid}: the bot wrote a line that is not a Decision: {_shorten(line)}")
            self._resolve(rid, pb.Decision(request_id=rid, action_id=""))
        elif decision.request_id in self.waiting:
            self._resolve(decision.request_id, decision)
        elif self.client is None or not self.client.send(decision):
            _say(f"dropped a reply to request {decision.request_id}: not connected")

    def _resolve(self, rid: int, decision: pb.Decision) -> None:
        future = self.waiting.pop(rid)
        if not future.done():
            future.set_result(decision)

    async def stop(self) -> None:
        """Close the bot's stdin, then SIGTERM it, then SIGKILL it; always reaps."""
        proc = self.process
        if proc is None:
            return
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if proc.returncode is not None:
                break
            if sig is not None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), STOP_GRACE_S)
        await proc.wait()


def _how_it_ended(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with code {code}"


async def bridge(
    command: Sequence[str],
    *,
    server: str,
    token: str,
    name: str = "",
    games: Sequence[str] = (),
    reconnect_s: float = 30.0,
    tls_ca: Pem | None = None,
    tls_cert: Pem | None = None,
    tls_key: Pem | None = None,
) -> int:
    """Serve the server's requests with the bot process; returns the exit code."""
    if shutil.which(command[0]) is None:
        _say(f"cannot start the bot: {command[0]!r} is not an executable file or command")
        return 127
    bot = StdioBot(command)
    try:
        client = BotClient(
            bot.decide,
            server=server,
            token=token,
            name=name,
            games=games,
            on_event=bot.event,
            reconnect_s=reconnect_s,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
        )
    except (OSError, ValueError) as err:
        _say(tls_error(err))
        return 2
    try:
        await bot.start()
    except OSError as err:
        _say(f"cannot start the bot {command[0]!r}: {err.strerror or err}")
        return 127
    assert bot.process is not None
    bot.client = client
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.create_task(client.run())
    reading = asyncio.create_task(bot.read_answers())
    exited = asyncio.create_task(bot.process.wait())
    stopped = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({serving, exited, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if client.goodbye is not None and not stop.is_set():
            # the bot was told first; it may have exited on it already (that is no failure)
            print(goodbye_line(client.goodbye.reason), file=sys.stderr, flush=True)
            return 0
        if exited.done() and not stopped.done():
            # let its last lines through; a SIGTERM to the whole group may be on its way too
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reading), 1.0)
            await asyncio.sleep(0.1)
        if stop.is_set():
            return 0
        if exited.done():
            code = exited.result()
            _say(f"the bot process {_how_it_ended(code)}; disconnecting")
            return code if code > 0 else 128 - code if code < 0 else 1
        try:
            serving.result()
        except BotRefused as err:
            _say(f"refused by {server}: {err}")
            return 2
        except Exception as err:  # one line, never a traceback
            _say(f"stopped by an error: {type(err).__name__}: {err}")
            return 1
        if client.lost:  # fd:N ended without a Goodbye: there is no reconnecting
            _say(f"{client.lost} without a Goodbye; stopping")
            return 1
        if client.gave_up:
            print(gave_up_line(server, reconnect_s), file=sys.stderr, flush=True)
            return 1
        return 0
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        for task in (serving, stopped):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await serving
        await bot.stop()
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reading
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await exited


PROG = "python -m cardshark_bot.bridge"


def _parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Play a bot that speaks JSON lines: every message from the server goes to its stdin"
            " as one line of protobuf JSON, and each line it writes to stdout answers a request"
            ' ({"request_id": 5, "action_id": "play:QH"}). See docs/protocol.md, section 8.'
        ),
        usage="%(prog)s [--server HOST:PORT] [--token TOKEN] [--name NAME] -- COMMAND [ARG...]",
    )
    parser.add_argument("--server", default=os.environ.get("CARDSHARK_SERVER", DEFAULT_SERVER))
    parser.add_argument("--token", default=os.environ.get("CARDSHARK_TOKEN", ""))
    parser.add_argument("--name", default="", help="bot name sent in the Hello")
    parser.add_argument("--games", default="", help="comma-separated game names (default: all)")
    parser.add_argument(
        "--reconnect-s",
        type=float,
        default=30.0,
        help="give up when the server is gone this long (default 30)",
    )
    add_tls_arguments(parser)
    return parser


def bridge_main(argv: list[str], prog: str = PROG) -> int:
    """The bridge's command line; argv excludes the program name, prog names the program in
    usage and errors (`cardshark bridge` from the cardshark command). Returns the exit code."""
    parser = _parser(prog)
    if "--" in argv:
        cut = argv.index("--")
        options, command = argv[:cut], argv[cut + 1 :]
        args = parser.parse_args(options)
    else:
        parser.add_argument("command", nargs=argparse.REMAINDER, help="the bot to run, after --")
        args = parser.parse_args(argv)
        command = args.command
    if not command:
        parser.error("no bot command: give it after --, e.g. -- perl clients/perl/random_bot.pl")
    if not args.token:
        parser.error("no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)")
    try:
        channel_credentials(args.tls_ca, args.tls_cert, args.tls_key)  # checked before the bot
    except (OSError, ValueError) as err:
        parser.error(tls_error(err))
    games = [g for g in args.games.split(",") if g]
    name = args.name or " ".join(os.path.basename(arg) for arg in command)[:64]
    try:
        return asyncio.run(
            bridge(
                command,
                server=args.server,
                token=args.token,
                name=name,
                games=games,
                reconnect_s=args.reconnect_s,
                tls_ca=args.tls_ca,
                tls_cert=args.tls_cert,
                tls_key=args.tls_key,
            )
        )
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(bridge_main(sys.argv[1:]))
