"""A running referee with its bots: register tokens, start managed bots, play matches."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from games.registry import get_game
from server.app import RunningServer, ServiceAdder, start_server
from server.bots import ManagedBot
from server.hub import BotIdentity
from server.records import ClockSettings, MatchRecord
from server.referee import MatchRunner
from server.service import Authenticator


class Arena:
    """A referee server on a local port plus the bots it knows and the processes it started."""

    def __init__(
        self,
        log_dir: Path | str = "logs",
        host: str = "127.0.0.1",
        port: int = 0,
        authenticate: Authenticator | None = None,
        services: Sequence[ServiceAdder] = (),
    ):
        self.log_dir = Path(log_dir)
        self.services = list(services)
        self.fallback_auth = authenticate
        self.host = host
        self.port = port
        self.tokens: dict[str, BotIdentity] = {}
        self.managed: list[ManagedBot] = []
        self.running: RunningServer | None = None

    async def __aenter__(self) -> Arena:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the server."""
        self.running = await start_server(self.authenticate, self.host, self.port, self.services)

    def authenticate(self, token: str) -> BotIdentity | None:
        """The bot a token belongs to: session tokens first, then the fallback (the database)."""
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
        token = token or secrets.token_urlsafe(24)
        self.tokens[token] = BotIdentity(bot_id or name, name)
        return token

    async def spawn(self, name: str, command: str | Sequence[str], token: str) -> ManagedBot:
        """Start a managed bot process that connects with token."""
        bot = ManagedBot(name, command, self.log_dir / f"{name}.stderr.log")
        self.managed.append(bot)
        await bot.start(self.address, token)
        return bot

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
            self.running.hub,
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

    async def stop_bots(self, bots: Sequence[ManagedBot]) -> None:
        """Stop some managed bots (e.g. a finished tournament's) and forget them."""
        await asyncio.gather(*(bot.stop() for bot in bots), return_exceptions=True)
        self.managed = [b for b in self.managed if b not in bots]

    async def close(self) -> None:
        """Stop every managed bot, then the server."""
        await asyncio.gather(*(bot.stop() for bot in self.managed), return_exceptions=True)
        if self.running is not None:
            await self.running.stop(0.5)
            self.running = None
