"""Connect, say hello, answer requests concurrently, and reconnect after a lost stream.

A Goodbye from the server (the tournament finished, the server is shutting down) ends the
run: `BotClient.run` returns with `goodbye` set, and `run` prints one line saying so to
stderr and returns, so the bot exits with status 0 instead of reconnecting.

The server address is HOST:PORT, or unix:/PATH for a Unix domain socket. With a CA
(`tls_ca`, `--tls-ca`, CARDSHARK_TLS_CA) the bot speaks TLS and checks the server's
certificate against it; for mutual TLS it also presents `tls_cert`/`tls_key`.

A managed bot the server starts finds `fd:3` instead (the local transport, cardshark_bot.local):
the same messages as frames over a socket it inherited, no gRPC. Nothing changes for the
bot's code; only, the descriptor being the one way in, a lost connection ends the run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import inspect
import logging
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.local import BlockingLink, FrameError, LocalLink, open_link, parse_fd

if TYPE_CHECKING:
    import grpc

# gRPC is imported where a bot connects over the network, not at import: a managed bot over
# the local transport never uses it, and importing it is about a third of such a bot's start.
log = logging.getLogger("cardshark_bot")
PROTOCOL_VERSION = 1
DEFAULT_SERVER = "127.0.0.1:50051"

Answer = str | pb.Decision  # an action id, or a whole Decision sent as given
Decide = Callable[[pb.DecisionRequest], "Answer | Awaitable[Answer]"]
EventHandler = Callable[[pb.RefereeMessage], None]
Pem = bytes | str | os.PathLike[str]  # PEM bytes, or the path of a PEM file
Emit = Callable[[pb.BotMessage], object]  # sends a message on the current stream


def lost_line(why: str) -> str:
    """The one line a kit prints when its local connection ends without a Goodbye."""
    return f"cardshark: {why} without a Goodbye; stopping"


def retry_line(server: str, why: str, seconds: float) -> str:
    """The one line a kit prints when it cannot reach the server and starts retrying."""
    return f"cardshark: cannot reach {server} ({why}); retrying for up to {seconds:g} s"


def gave_up_line(server: str, seconds: float) -> str:
    """The one line a kit prints when it stops retrying."""
    return f"cardshark: cannot reach {server} for {seconds:g} s; stopping"


def unreachable_reason(details: str) -> str:
    """gRPC's account of a failed connection, short: 'connection refused' rather than its
    'failed to connect to all addresses; last error: ... Connection refused'."""
    for known in ("Connection refused", "Connection reset", "Socket closed"):
        if known.lower() in details.lower():
            return known.lower()
    return " ".join(details.split()) or "no reason given"


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def goodbye_line(reason: str) -> str:
    """The one line a kit prints when the server says Goodbye."""
    said = " ".join(reason.split()) or "the server said goodbye"
    return f"cardshark: {said}; nothing more to play"


class BotRefused(Exception):
    """The server refused the bot (bad token or protocol version); retrying will not help."""


class TlsFailed(BotRefused):
    """The TLS handshake failed (untrusted certificate, no client certificate, plain server)."""


def read_pem(value: Pem | None) -> bytes | None:
    """PEM bytes as given, or read from a path; None stays None."""
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()


def channel_credentials(
    tls_ca: Pem | None, tls_cert: Pem | None = None, tls_key: Pem | None = None
) -> grpc.ChannelCredentials | None:
    """TLS credentials trusting tls_ca (with a client certificate for mutual TLS), or None."""
    if tls_ca is None:
        if tls_cert is not None or tls_key is not None:
            raise ValueError("a client certificate needs a CA to trust: give tls_ca too")
        return None
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("tls_cert and tls_key go together: give both or neither")
    import grpc

    return grpc.ssl_channel_credentials(
        root_certificates=read_pem(tls_ca),
        private_key=read_pem(tls_key),
        certificate_chain=read_pem(tls_cert),
    )


def _tls_failure(err: grpc.aio.AioRpcError) -> bool:
    import grpc

    details = (err.details() or "").lower()
    return err.code() == grpc.StatusCode.UNAVAILABLE and (
        "handshake" in details or "certificate" in details or "ssl" in details
    )


class BotClient:
    """A bot's connection to a cardshark server."""

    def __init__(
        self,
        decide: Decide,
        *,
        server: str = DEFAULT_SERVER,
        token: str,
        name: str = "",
        games: Sequence[str] = (),
        on_event: EventHandler | None = None,
        reconnect_s: float = 30.0,
        tls_ca: Pem | None = None,
        tls_cert: Pem | None = None,
        tls_key: Pem | None = None,
        say: Callable[[str], None] = _stderr_line,
    ) -> None:
        self.decide = decide
        self.local_fd = parse_fd(server)  # fd:N: the local transport
        self.credentials = channel_credentials(tls_ca, tls_cert, tls_key)
        self.server = server
        self.token = token
        self.name = name
        self.games = list(games)
        self.on_event = on_event
        self.reconnect_s = reconnect_s
        self.welcome: pb.Welcome | None = None
        self.goodbye: pb.Goodbye | None = None  # set when the server said it: run() returns
        self.lost = ""  # over fd:N, why the connection ended without a Goodbye (run() returns)
        self.gave_up = False  # the server was out of reach for reconnect_s: run() returned
        self.say = say  # where the retry line goes (stderr)
        self._emit: Emit | None = None  # how the current stream sends, while there is one
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Serve until the server says Goodbye (then `goodbye` is set), or is gone for longer
        than reconnect_s; raises BotRefused if it refuses the bot. Over the local transport
        (fd:N) there is no reconnecting: the end of the connection ends the run."""
        if self.local_fd is not None:
            await self._serve_local(self.local_fd)
            return
        import grpc

        lost_at: float | None = None
        delay = 0.05
        while True:
            why = "the stream ended"
            try:
                welcomed = self.welcome
                await self._serve_once()
                if self.goodbye is not None:
                    return
                lost_at, delay = None, 0.05
            except grpc.aio.AioRpcError as err:
                if err.code() in (
                    grpc.StatusCode.UNAUTHENTICATED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                ):
                    raise BotRefused(err.details() or str(err.code())) from None
                if self.credentials is not None and _tls_failure(err):
                    raise TlsFailed(f"TLS handshake failed: {err.details()}") from None
                log.info("stream lost: %s", err.code())
                why = unreachable_reason(err.details() or err.code().name)
                if self.welcome is not welcomed:  # it got in before the stream was lost
                    lost_at, delay = None, 0.05
            now = time.monotonic()
            if lost_at is None:  # one line an outage, not one an attempt
                lost_at = now
                self.say(retry_line(self.server, why, self.reconnect_s))
            if now - lost_at > self.reconnect_s:
                log.info("server gone for %.0f s; stopping", now - lost_at)
                self.gave_up = True
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _hello(self) -> pb.BotMessage:
        hello = pb.Hello(
            token=self.token,
            bot_name=self.name,
            protocol_version=PROTOCOL_VERSION,
            games=self.games,
        )
        return pb.BotMessage(hello=hello)

    def _dispatch(self, msg: pb.RefereeMessage, emit: Emit) -> bool:
        """Handle one message from the server; True on the Goodbye (the last one)."""
        kind = msg.WhichOneof("kind")
        if kind == "request":
            answer = self.decide(msg.request)
            if type(answer) is not str and inspect.isawaitable(answer):
                # a slow async decision must not hold up other matches' requests
                task = asyncio.create_task(self._finish(msg.request, answer, emit))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            else:
                self._send(msg.request, answer, emit)
            return False
        if kind == "welcome":
            self.welcome = msg.welcome
        elif kind == "goodbye":
            self.goodbye = msg.goodbye
        if self.on_event is not None:
            self.on_event(msg)
        return bool(kind == "goodbye")  # the last message: nothing more to play, no reconnecting

    def _cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _serve_local(self, fd: int) -> None:
        """The whole run over the local transport: frames on descriptor fd."""
        try:
            sock = socket.socket(fileno=fd)
        except OSError as err:
            raise BotRefused(f"cannot use descriptor {fd}: {err.strerror or err}") from None
        busy = self._loop_busy()
        link: LocalLink | BlockingLink | None = None
        try:
            if busy is not None:
                link = BlockingLink(sock)
                self._emit = link.send
                link.send(self._hello())
                link = await self._serve_blocking(link, busy)
            else:
                link = await self._open_local(sock, fd)
                self._emit = link.send
                link.send(self._hello())
            if link is not None:
                await link.done
        except FrameError as err:
            self.lost = f"the server sent bytes that are not frames on fd:{fd} ({err})"
        finally:
            self._emit = None
            self._cancel_tasks()
            if link is not None:
                link.close()
            else:
                sock.close()
        if self.welcome is None:
            raise BotRefused(
                f"the server closed descriptor {fd} without a Welcome (refused: its log says why)"
            )
        if self.goodbye is None and not self.lost:
            self.lost = f"the server closed fd:{fd}"

    async def _open_local(self, sock: socket.socket, fd: int) -> LocalLink:
        """A LocalLink on the loop that dispatches every message it reads."""

        def on_message(msg: pb.RefereeMessage) -> None:
            if self._dispatch(msg, link.send):
                link.finish()

        try:
            link = await open_link(sock, on_message)
        except OSError as err:
            raise BotRefused(f"cannot use descriptor {fd}: {err.strerror or err}") from None
        return link

    def _loop_busy(self) -> Callable[[], bool] | None:
        """For a plain decide function on a loop with nothing else to run: a check that the
        loop has work waiting (a task started, a timer set). None where a blocking read would
        starve something or where the loop cannot tell (another loop implementation)."""
        if inspect.iscoroutinefunction(self.decide):
            return None
        loop = asyncio.get_running_loop()
        ready, timers = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None)
        if not isinstance(ready, collections.deque) or not isinstance(timers, list):
            return None
        if ready or timers or len(asyncio.all_tasks(loop)) > 1:
            return None
        return lambda: bool(ready) or bool(timers)

    async def _serve_blocking(
        self, fast: BlockingLink, busy: Callable[[], bool]
    ) -> LocalLink | None:
        """Serve with blocking reads for as long as every answer is ready at once. When one is
        awaited (or a task or timer was started), hand the rest over to the loop and return
        that link; None once the conversation is over."""

        def on_message(msg: pb.RefereeMessage) -> None:
            if self._dispatch(msg, fast.send):
                fast.finish()

        while (payloads := fast.read()) is not None:
            for payload in payloads:
                try:
                    msg = pb.RefereeMessage.FromString(payload)
                except DecodeError as err:
                    raise FrameError(f"a message that does not parse: {err}") from None
                try:
                    if self._dispatch(msg, fast.send):
                        return None  # the Goodbye: nothing more is read
                except Exception as exc:  # as the loop treats a failing protocol callback
                    asyncio.get_running_loop().call_exception_handler(
                        {
                            "message": "Fatal error: protocol.data_received() call failed.",
                            "exception": exc,
                        }
                    )
                    return None
            if fast.broken:
                return None
            if busy():
                return await fast.hand_over(on_message)
        return None

    async def _serve_once(self) -> None:
        import grpc

        from cardshark.v1 import referee_pb2_grpc

        outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        outbox.put_nowait(self._hello())

        async def outgoing() -> AsyncIterator[pb.BotMessage]:
            while (msg := await outbox.get()) is not None:
                yield msg

        emit = outbox.put_nowait
        self._emit = emit
        channel = (
            grpc.aio.insecure_channel(self.server)
            if self.credentials is None
            else grpc.aio.secure_channel(self.server, self.credentials)
        )
        async with channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Play(outgoing())
            try:
                async for msg in call:
                    if self._dispatch(msg, emit):
                        break
            finally:
                if self._emit is emit:
                    self._emit = None
                outbox.put_nowait(None)
                self._cancel_tasks()

    async def _finish(
        self,
        request: pb.DecisionRequest,
        answer: Awaitable[Answer],
        emit: Emit,
    ) -> None:
        self._send(request, await answer, emit)

    def send(self, decision: pb.Decision) -> bool:
        """Send a Decision as given on the current stream; False when there is none."""
        if self._emit is None:
            return False
        return self._emit(pb.BotMessage(decision=decision)) is not False

    @staticmethod
    def _send(request: pb.DecisionRequest, answer: Answer, emit: Emit) -> None:
        if isinstance(answer, pb.Decision):
            emit(pb.BotMessage(decision=answer))
            return
        # Built from a dict in one call: a Decision built first is copied into the
        # BotMessage, which took twice as long.
        decision = {"request_id": request.request_id, "action_id": str(answer)}
        emit(pb.BotMessage(decision=decision))


def run(
    decide: Decide,
    *,
    name: str = "",
    games: Sequence[str] = (),
    on_event: EventHandler | None = None,
) -> None:
    """Run a bot from the command line: --server/--token or CARDSHARK_SERVER/CARDSHARK_TOKEN.

    Returns once the server says Goodbye, after printing one line saying so to stderr (the
    bot exits 0); exits 2 if the server refuses the bot, and 1 (with one line) when a local
    connection (fd:N) ends without a Goodbye.
    """
    parser = argparse.ArgumentParser(description=f"cardshark bot {name}".strip())
    parser.add_argument("--server", default=os.environ.get("CARDSHARK_SERVER", DEFAULT_SERVER))
    parser.add_argument("--token", default=os.environ.get("CARDSHARK_TOKEN", ""))
    add_tls_arguments(parser)
    args = parser.parse_args()
    if not args.token:
        parser.error("no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)")
    try:
        client = BotClient(
            decide,
            server=args.server,
            token=args.token,
            name=name,
            games=games,
            on_event=on_event,
            tls_ca=args.tls_ca,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
        )
    except (OSError, ValueError) as err:
        parser.error(tls_error(err))
    try:
        asyncio.run(client.run())
    except BotRefused as err:
        print(f"refused by {args.server}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        pass
    if client.goodbye is not None:
        print(goodbye_line(client.goodbye.reason), file=sys.stderr, flush=True)
    elif client.lost:  # the local transport's end without a Goodbye: no reconnecting
        print(lost_line(client.lost), file=sys.stderr, flush=True)
        raise SystemExit(1)
    elif client.gave_up:
        print(gave_up_line(args.server, client.reconnect_s), file=sys.stderr, flush=True)
        raise SystemExit(1)


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """--tls-ca/--tls-cert/--tls-key, defaulting to CARDSHARK_TLS_CA/_CERT/_KEY."""
    env = os.environ
    parser.add_argument(
        "--tls-ca",
        default=env.get("CARDSHARK_TLS_CA") or None,
        help="PEM CA that signed the server's certificate: speak TLS (CARDSHARK_TLS_CA)",
    )
    parser.add_argument(
        "--tls-cert",
        default=env.get("CARDSHARK_TLS_CERT") or None,
        help="PEM client certificate for mutual TLS (CARDSHARK_TLS_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=env.get("CARDSHARK_TLS_KEY") or None,
        help="PEM key of --tls-cert (CARDSHARK_TLS_KEY)",
    )


def tls_error(err: OSError | ValueError) -> str:
    """One line for a TLS file that cannot be read or a bad combination of them."""
    if isinstance(err, OSError):
        return f"cannot read TLS file {err.filename}: {err.strerror or err}"
    return str(err)
