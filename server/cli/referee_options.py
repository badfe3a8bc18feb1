"""The referee's options, declared once for every command that runs a referee.

`tournament run`, `tournament resume`, `serve` and `worker` each take the interface, TLS,
sandbox and bot limits (and all but `worker` the clock and transport). They are declared
here once, with their defaults and their checks, and `@referee_options(...)` adds them to a
command, which receives them as one `RefereeOptions`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from server.bots.sandbox import SandboxPolicy
from server.cli.common import (
    BotCpuOption,
    BotMemoryOption,
    BotPidsOption,
    ClockOption,
    HostOption,
    SandboxOption,
    TlsCertOption,
    TlsClientCaOption,
    TlsKeyOption,
    TransportOption,
    check_clock,
    check_sandbox_kind,
    check_transport,
    sandbox_policy,
    tls_options,
)
from server.transport.tls import TlsConfig
from tournaments.store import Store

F = TypeVar("F", bound=Callable[..., Any])

# Each option: its name, its typer annotation, its default.
_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("host", HostOption, "127.0.0.1"),
    ("tls_cert", TlsCertOption, None),
    ("tls_key", TlsKeyOption, None),
    ("tls_client_ca", TlsClientCaOption, None),
    ("sandbox", SandboxOption, "bwrap"),
    ("bot_memory", BotMemoryOption, 1024),
    ("bot_cpu", BotCpuOption, 0),
    ("bot_pids", BotPidsOption, 64),
    ("clock", ClockOption, "cpu"),
    ("transport", TransportOption, "local"),
)
_PLAY = ("clock", "transport")  # how matches are played: not the worker's to choose


@dataclass(frozen=True)
class RefereeOptions:
    """The referee's interface, TLS files, sandbox, bot limits, clock and transport."""

    host: str = "127.0.0.1"
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    sandbox: str = "bwrap"
    bot_memory: int = 1024
    bot_cpu: int = 0
    bot_pids: int = 64
    clock: str = "cpu"
    transport: str = "local"

    def check(self) -> None:
        """Refuse an unknown clock, sandbox or transport in one line, before anything opens."""
        check_clock(self.clock)
        check_sandbox_kind(self.sandbox)
        check_transport(self.transport)

    def tls(self) -> TlsConfig | None:
        """The TLS files read and checked; a warning for plain TCP off the loopback."""
        return tls_options(self.host, self.tls_cert, self.tls_key, self.tls_client_ca)

    @property
    def tls_given(self) -> bool:
        """True if any TLS file was named."""
        return any((self.tls_cert, self.tls_key, self.tls_client_ca))

    def policy(
        self, store: Store | None = None, log_dir: Path | None = None, check: bool = True
    ) -> SandboxPolicy:
        """The managed bots' sandbox with these limits, checked on this machine."""
        return sandbox_policy(
            self.sandbox, self.bot_memory, self.bot_cpu, self.bot_pids, store, log_dir, check
        )

    @property
    def cpu_clocks(self) -> bool:
        """True if managed bots are timed by their CPU."""
        return self.clock == "cpu"


assert [f.name for f in fields(RefereeOptions)] == [name for name, _, _ in _OPTIONS]


def referee_options(*, play: bool = True) -> Callable[[F], F]:
    """Add the referee's options to a typer command, which takes them as `referee`; without
    `play`, not the clock and transport (a worker plays as each tournament says)."""
    chosen = [o for o in _OPTIONS if play or o[0] not in _PLAY]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "referee"]
        keyword = inspect.Parameter.KEYWORD_ONLY
        added = [
            inspect.Parameter(name, keyword, default=default, annotation=kind)
            for name, kind, default in chosen
        ]
        names = [name for name, _, _ in chosen]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names}
            return command(referee=RefereeOptions(**given), **kwargs)

        # typer reads the signature: the command's own options, then the referee's.
        parameters = [*[p.replace(kind=keyword) for p in own], *added]
        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        del wrapper.__wrapped__
        return wrapper  # type: ignore[return-value]

    return decorate
