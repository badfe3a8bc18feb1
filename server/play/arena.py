"""A running referee with its bots: register tokens, start managed bots, play matches."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from games.registry import get_game
from server.bots.process import ManagedBot
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.match.clocks import CgroupCpuMeter
from server.match.hub import BotHub
from server.match.records import ClockSettings, MatchRecord
from server.match.runner import MatchRunner
from server.match.sessions import BotIdentity
from server.transport.grpc_server import VERSION, RunningServer, ServiceAdder, start_server
from server.transport.local import LocalConnection, serve_socket, socket_pair
from server.transport.service import Authenticator, Refusal
from server.transport.tls import TlsConfig
from tournaments.store import new_token

# The reasons of the Goodbye that tells a bot it has nothing more to play.
TOURNAMENT_FINISHED = "tournament finished"
TOURNAMENT_STOPPED = "tournament stopped"  # cancelled, or stopped by an error
SERVER_SHUTTING_DOWN = "server shutting down"
GOODBYE_EXIT_S = 2.0  # a managed bot told Goodbye has this long to exit before its SIGTERM
# How managed bots reach the referee: "local", frames over a socket pair inherited as fd 3
# (server/transport/local.py), or "grpc" over the referee's Unix socket. Remote bots: gRPC.
TRANSPORTS = ("local", "grpc")
DEFAULT_TRANSPORT = "local"


def check_transport(transport: str) -> str:
    """transport if it names one; else ValueError in one line naming those allowed."""
    if transport not in TRANSPORTS:
        raise ValueError(
            f"unknown transport {transport!r}; allowed: {', '.join(TRANSPORTS)} "
            "(local: managed bots speak frames over an inherited socket; grpc: over the "
            "referee's Unix socket)"
        )
    return transport


class Arena:
    """A referee server on a local port plus the bots it knows and the processes it started."""

    def __init__(
        self,
        log_dir: Path | str = "logs",
        host: str = "127.0.0.1",
        port: int = 0,
        authenticate: Authenticator | None = None,
        services: Sequence[ServiceAdder] = (),
        *,
        tls: TlsConfig | None = None,
        sandbox: SandboxPolicy = NO_SANDBOX,
        cpu_clocks: bool = True,
        transport: str = DEFAULT_TRANSPORT,
    ):
        self.log_dir = Path(log_dir)
        self.transport = check_transport(transport)
        self._local: dict[ManagedBot, LocalConnection] = {}
        self.tls = tls
        self.sandbox = sandbox
        self.cpu_clocks = cpu_clocks
        # The bots' sessions and deadlines, whichever transport they come by: the arena's,
        # handed to the gRPC server and to every local socket.
        self.hub = BotHub(cpu_clocks)
        self._socket_dir: str | None = None
        self.services = list(services)
        self.fallback_auth = authenticate
        self.host = host
        self.port = port
        self.tokens: dict[str, BotIdentity] = {}
        self.managed: list[ManagedBot] = []
        self._bot_ids: dict[ManagedBot, str] = {}  # whose stream each managed bot speaks on
        self._held: Counter[str] = Counter()  # remote bots that running tournaments need
        self._watchers: set[asyncio.Task[None]] = set()
        # Told of every managed bot whose process ends before the server stopped it.
        self.exit_listeners: list[Callable[[ManagedBot], None]] = []
        self.running: RunningServer | None = None

    async def __aenter__(self) -> Arena:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the server."""
        # Sandboxed bots have no network: they reach the referee by a socket in a private
        # directory, bind-mounted into each sandbox (the directory itself stays 0700).
        self._socket_dir = tempfile.mkdtemp(prefix="cardshark-")
        socket_path = f"{self._socket_dir}/referee.sock"
        try:
            self.running = await start_server(
                self.authenticate,
                self.host,
                self.port,
                self.services,
                tls=self.tls,
                unix_socket=socket_path,
                hub=self.hub,
            )
        except BaseException:
            self._remove_socket_dir()
            raise
        # Bots run as other uids; the token, not the file mode, is what admits them.
        Path(socket_path).chmod(0o666)

    @property
    def socket_path(self) -> str:
        """The referee's Unix socket on this machine."""
        assert self._socket_dir is not None, "arena not started"
        return f"{self._socket_dir}/referee.sock"

    def _remove_socket_dir(self) -> None:
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    def authenticate_local(self, token: str) -> BotIdentity | None:
        """A managed bot's launch token (a local socket admits no other kind of token)."""
        return self.tokens.get(token)

    def authenticate(self, token: str) -> BotIdentity | Refusal | None:
        """The bot a token belongs to: session tokens first, then the fallback (the database,
        which may refuse the bot with a reason)."""
        known = self.tokens.get(token)
        if known is None and self.fallback_auth is not None:
            return self.fallback_auth(token)
        return known

    @property
    def address(self) -> str:
        """host:port bots should dial."""
        assert self.running is not None, "arena not started"
        return self.running.address

    def register(self, name: str, token: str | None = None, bot_id: str | None = None) -> str:
        """Know a bot by token; returns the token (a new secret unless given)."""
        token = token or new_token()
        self.tokens[token] = BotIdentity(bot_id or name, name)
        return token

    async def spawn(
        self,
        name: str,
        command: str | Sequence[str],
        token: str,
        log_dir: Path | None = None,
        *,
        workdir: Path | None = None,
        hold: IO[bytes] | None = None,
    ) -> ManagedBot:
        """Start a managed bot (sandboxed per the arena's policy) that connects with token;
        with workdir (its unpacked stored code), the command runs there, and hold (the
        cache's lock on it) is closed when the bot stops.

        The token is a launch token: it is revoked as soon as the process exits.
        """
        bot = ManagedBot(
            name,
            command,
            (log_dir or self.log_dir) / f"{name}.stderr.log",
            sandbox=self.sandbox,
            socket_path=self.socket_path,
            workdir=workdir,
            hold=hold,
        )
        assert self.running is not None, "arena not started"
        if self.transport == "local":
            ours, theirs = socket_pair()
            try:
                await bot.start("", token, local=theirs)
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()  # the bot holds its end now; ours sees EOF when it exits
            self._local[bot] = await serve_socket(
                ours, self.hub, self.authenticate_local, token, VERSION, name
            )
        else:
            # Managed bots are local: the Unix socket, never TLS they hold no CA for.
            await bot.start(self.running.unix_address or self.address, token)
        self.managed.append(bot)
        self._bot_ids[bot] = self.identity(token).bot_id
        cgroups = bot.confinement.cgroups if bot.confinement is not None else None
        meter = cgroups.cpu_meter() if cgroups is not None else None
        # Registered before the bot can connect: its stream is timed by its CPU.
        self.hub.managed_started(self.identity(token).bot_id, meter)
        self._watchers.add(asyncio.create_task(self._revoke_on_exit(bot, token)))
        return bot

    async def _revoke_on_exit(self, bot: ManagedBot, token: str) -> None:
        assert bot.process is not None
        try:
            await bot.process.wait()
        except asyncio.CancelledError:
            return
        identity = self.tokens.pop(token, None)
        if identity is not None and self.running is not None:
            meter = self.hub.managed_exited(identity.bot_id)
            if isinstance(meter, CgroupCpuMeter):
                meter.close()
            if not bot.stopping:
                self.hub.mark_gone(identity.bot_id, f"is not running: it {bot.exit_description()}")
                await bot.drained()
                for listener in self.exit_listeners:
                    listener(bot)

    async def play(
        self,
        game_name: str,
        bots: Sequence[BotIdentity],
        seed: int,
        options: Mapping[str, Any] | None = None,
        clock: ClockSettings | None = None,
        match_id: str | None = None,
    ) -> MatchRecord:
        """Play one match to its end and return its record."""
        assert self.running is not None, "arena not started"
        runner = MatchRunner(
            self.hub,
            get_game(game_name),
            match_id or uuid.uuid4().hex[:12],
            seed,
            bots,
            options,
            clock,
        )
        return await runner.run()

    def identity(self, token: str) -> BotIdentity:
        """The bot registered with token."""
        return self.tokens[token]

    async def stop_bots(
        self, bots: Sequence[ManagedBot], reason: str = TOURNAMENT_FINISHED
    ) -> None:
        """Stop some managed bots (e.g. a finished tournament's) and forget them: each is told
        Goodbye and gets GOODBYE_EXIT_S to exit by itself; then the rest get SIGTERM."""
        await self._goodbye(bots, [self._bot_ids[b] for b in bots if b in self._bot_ids], reason)
        await asyncio.gather(*(bot.stop() for bot in bots), return_exceptions=True)
        self.managed = [b for b in self.managed if b not in bots]
        for bot in bots:
            self._bot_ids.pop(bot, None)
            connection = self._local.pop(bot, None)
            if connection is not None:
                connection.close()

    def hold(self, bot_ids: Iterable[str]) -> None:
        """Note that a running tournament needs these remote bots, until it releases them."""
        self._held.update(dict.fromkeys(bot_ids, 1))

    async def release(self, bot_ids: Iterable[str], reason: str) -> list[str]:
        """A tournament is done with these remote bots: those no other running tournament
        holds are told Goodbye on their live streams. Returns the ids of the bots told."""
        free = []
        for bot_id in dict.fromkeys(bot_ids):
            self._held[bot_id] -= 1
            if self._held[bot_id] <= 0:
                del self._held[bot_id]
                free.append(bot_id)
        if self.running is None or not free:
            return []
        return await self.hub.farewell(free, reason)

    async def _goodbye(
        self, bots: Sequence[ManagedBot], bot_ids: Sequence[str], reason: str
    ) -> None:
        """Goodbye to bot_ids on their live streams; then wait, at most GOODBYE_EXIT_S, for
        the processes of those of bots that were told to exit."""
        if self.running is None:
            return
        for bot in bots:
            bot.stopping = True  # the server ends it: its exit is no fault of the bot
        told = set(await self.hub.farewell(bot_ids, reason))
        exits = [
            asyncio.ensure_future(bot.process.wait())
            for bot in bots
            if bot.process is not None
            and bot.process.returncode is None
            and self._bot_ids.get(bot) in told
        ]
        if exits:
            _, late = await asyncio.wait(exits, timeout=GOODBYE_EXIT_S)
            for waiter in late:
                waiter.cancel()

    async def close(self) -> None:
        """Stop every managed bot, then the server. Every connected bot is told Goodbye
        first (server shutting down); managed bots get GOODBYE_EXIT_S to exit by themselves."""
        if self.running is not None:
            connected = [identity.bot_id for identity in self.hub.connected()]
            await self._goodbye(self.managed, connected, SERVER_SHUTTING_DOWN)
        await asyncio.gather(*(bot.stop() for bot in self.managed), return_exceptions=True)
        for connection in self._local.values():
            connection.close()
        self._local.clear()
        if self.running is not None:
            await self.running.stop(0.5)
            self.running = None
        for watcher in self._watchers:
            watcher.cancel()
        self._remove_socket_dir()
