"""What every cardshark command shares: consoles, common options, one-line errors."""

from __future__ import annotations

import errno
import importlib
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from games.errors import GameError
from server.bots.archive import ArchiveError
from server.bots.cgroups import BotLimits
from server.bots.code import cache_for
from server.bots.sandbox import (
    SandboxError,
    SandboxPolicy,
    unavailable_reason,
)
from server.match.clocks import CLOCK_KINDS
from server.transport.tls import TlsConfig, TlsFileError, load_tls, plain_tcp_warning
from tournaments.db import DEFAULT_URL, parse_url
from tournaments.errors import SchemaOutdatedError, SchemaVersionError, TournamentError
from tournaments.store import Store

T = TypeVar("T")


def _console(stderr: bool = False) -> Console:
    # Redirected to a file or a pipe, output is read by programs and wide viewers: a table is
    # never cut (or wrapped) at an assumed 80 columns. COLUMNS alone is a width asked for
    # (COLUMNS=100 cardshark ... | less); with LINES it is only inherited: GNU readline, which
    # Python REPLs and pytest load, exports both to every child process.
    probe = Console(stderr=stderr)
    asked = os.environ.get("COLUMNS", "").isdigit() and "LINES" not in os.environ
    return probe if probe.is_terminal or asked else Console(stderr=stderr, width=1000)


console = _console()
errors = _console(stderr=True)


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CARDSHARK_DB",
        help="A SQLite file's path, or a database URL (postgresql://...); default ./cardshark.db.",
    ),
]


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


SandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="How managed bots are confined: bwrap (namespaces, own uid, limits) or none.",
    ),
]


TransportOption = Annotated[
    str,
    typer.Option(
        "--transport",
        help="How managed bots reach the referee: local (frames over a socket they inherit "
        "as fd 3, no HTTP/2; the default) or grpc (over the referee's Unix socket). Remote "
        "bots always use gRPC.",
    ),
]


def check_transport(transport: str) -> None:
    """Refuse an unknown --transport in one line, before anything is opened or stored."""
    from server.play.arena import TRANSPORTS

    if transport not in TRANSPORTS:
        fail(
            f"--transport: unknown transport {transport!r}; allowed: {', '.join(TRANSPORTS)} "
            "(local: frames over an inherited socket; grpc: the referee's Unix socket)"
        )


ClockOption = Annotated[
    str,
    typer.Option(
        "--clock",
        help="cpu: a sandboxed managed bot is timed by the CPU it used (fair under load); "
        "wall: by wall time less the server's own lag (always so for remote bots).",
    ),
]


def port_number(value: int) -> int:
    """A TCP port, 0 to 65535 (0: any free one)."""
    if not 0 <= value <= 65535:
        raise typer.BadParameter(f"{value} is not a port; allowed: 0 to 65535 (0: any free port)")
    return value


def optional_port(value: int | None) -> int | None:
    """A TCP port if given (port_number's rules), else None."""
    return None if value is None else port_number(value)


REMOTE_PORT = 50051  # the kits' default server port: a remote bot finds it unconfigured
REMOTE_HINT = " and start them with --server HOST:PORT"  # after a port in use's remedy


PortOption = Annotated[
    int,
    typer.Option(
        "--port",
        callback=port_number,
        help=f"Port remote bots dial (default {REMOTE_PORT}, the kits' default; 0 is the same).",
    ),
]


HostOption = Annotated[
    str,
    typer.Option(
        "--host", help="Interface to listen on: an address of this machine (0.0.0.0: all)."
    ),
]


AllowAbsentOption = Annotated[
    bool,
    typer.Option(
        "--allow-absent",
        help="Play on when a managed bot cannot start or a remote bot has not connected: "
        "it forfeits its matches (default: stop before the first match).",
    ),
]
WaitOption = Annotated[
    float,
    typer.Option(
        "--wait-s",
        min=0.0,
        help="Seconds to wait for every remote bot to connect before the first match.",
    ),
]


BotMemoryOption = Annotated[
    int, typer.Option("--bot-memory", min=0, help="Memory per managed bot in MiB (0: no cap).")
]


BotCpuOption = Annotated[
    int, typer.Option("--bot-cpu", min=0, help="CPU seconds per managed bot process (0: no cap).")
]


BotPidsOption = Annotated[
    int, typer.Option("--bot-pids", min=0, help="Processes per managed bot (0: no cap).")
]


TlsCertOption = Annotated[
    Path | None,
    typer.Option("--tls-cert", help="PEM certificate chain: serve bots over TLS (with --tls-key)."),
]


TlsKeyOption = Annotated[
    Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")
]


TlsClientCaOption = Annotated[
    Path | None,
    typer.Option(
        "--tls-client-ca", help="PEM CA: mutual TLS, bots must present a certificate it signed."
    ),
]


def fail(message: str) -> NoReturn:
    """Print one clear line and exit non-zero."""
    errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def tls_options(
    host: str, cert: Path | None, key: Path | None, client_ca: Path | None
) -> TlsConfig | None:
    """The TLS files read and checked (one error line naming a bad one); warns on plain TCP."""
    try:
        tls = load_tls(cert, key, client_ca)
    except TlsFileError as exc:
        fail(str(exc))
    warning = plain_tcp_warning(host, tls)
    if warning is not None:
        errors.print(f"[bold yellow]{warning}[/]", highlight=False, soft_wrap=True)
    return tls


def sandbox_policy(
    kind: str,
    memory_mb: int,
    cpu_s: int,
    pids: int,
    store: Store | None = None,
    log_dir: Path | None = None,
    check: bool = True,
) -> SandboxPolicy:
    """The managed bots' sandbox, checked on this machine: one line and exit 2 if it cannot be."""
    try:
        forbidden = [os.getcwd(), str(log_dir or "logs")]
        if store is not None and store.url.startswith("sqlite:///"):
            forbidden.append(store.url.removeprefix("sqlite:///"))
        policy = SandboxPolicy(
            kind,
            BotLimits(memory_mb=memory_mb, cpu_s=cpu_s, pids=pids),
            forbidden=tuple(forbidden),
        )
    except SandboxError as exc:
        fail(str(exc))
    if not policy.on:
        errors.print(
            "[bold yellow]warning: --sandbox none: managed bots run unsandboxed, as this user, "
            "with its files and network[/]",
            highlight=False,
            soft_wrap=True,
        )
    elif check:
        require_sandbox(policy)
    return policy


_HELD: list[IO[bytes]] = []


def stored_code(store: Store, name: str, digest: str | None, policy: SandboxPolicy) -> Path | None:
    """A bot's stored code unpacked here (None without any), or one line saying why not."""
    if digest is None:
        return None
    try:
        tree, hold = cache_for(policy).checkout(digest, partial(store.bot_archive, digest))
    except (ArchiveError, OSError) as exc:
        fail(f"bot {name!r} cannot be played: its stored code was refused: {exc}")
    _HELD.append(hold)  # the command's bots run in the tree until it exits: no eviction
    return tree


def check_clock(clock: str) -> None:
    """Refuse an unknown --clock in one line that names the allowed ones."""
    if clock not in CLOCK_KINDS:
        fail(f"unknown --clock {clock!r}; allowed: {', '.join(CLOCK_KINDS)}")


def check_sandbox_kind(kind: str) -> None:
    """Refuse an unknown --sandbox in one line, before anything is opened or stored."""
    try:
        SandboxPolicy(kind)
    except SandboxError as exc:
        fail(str(exc))


def require_sandbox(policy: SandboxPolicy) -> None:
    """Refuse in one line when the policy asks for a sandbox this machine cannot build."""
    if policy.on and (why := unavailable_reason()) is not None:
        fail(f"cannot sandbox managed bots: {why}; or run them unsandboxed with --sandbox none")


@contextmanager
def clear_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one line and exit code 2."""
    try:
        yield
    except (GameError, TournamentError, SandboxError) as exc:
        fail(str(exc))
    except OSError as exc:  # e.g. the referee's port is taken
        fail(str(exc))
    except KeyboardInterrupt:
        errors.print("interrupted; finished matches are saved (resume with `tournament resume`)")
        raise typer.Exit(130) from None


@contextmanager
def open_store(db: str | None, create: bool = False) -> Iterator[Store]:
    """The database, with its errors as one line; only commands that store things (create)
    make a new one, so a mistyped path is an error rather than an empty database."""
    with clear_errors():
        if create:
            require_database_folder(db)
        else:
            require_existing_database(db)
        try:
            store = Store(db)
        except SchemaVersionError as exc:
            fail(schema_refusal(exc, db))
        try:
            yield store
        finally:
            store.close()


def _current_context() -> Any:
    # typer (0.2x) runs a vendored click, whose context stack is not click's own.
    try:
        found = importlib.import_module("typer._click.globals")
    except ImportError:  # an older typer on plain click
        found = importlib.import_module("click.globals")
    return found.get_current_context(silent=True)


def schema_refusal(exc: SchemaVersionError, db: str | None) -> str:
    """The one line that refuses to run this command on a database at another revision."""
    context = _current_context()
    name = context.command_path if context is not None else "cardshark"
    if isinstance(exc, SchemaOutdatedError):
        same = " with the same --db" if db is not None else ""
        return f"`{name}` cannot run: {exc}; run `cardshark db upgrade`{same} first"
    return f"`{name}` cannot run: {exc}; use a cardshark that knows revision {exc.found}"


def check_listen(
    host: str,
    port: int,
    what: str = "--host",
    port_flag: str = "--port",
    purpose: str = "bots",
    zero: str | None = "any free port",
    then: str = "",
) -> None:
    """Refuse, before anything is stored, an address this machine cannot listen on; a port in
    use names the port, the option that changes it and what its 0 means (zero; None: no 0)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        fail(
            f"cannot listen on {what} {host!r}: {exc}; give an address of this machine, "
            "e.g. 127.0.0.1 or 0.0.0.0"
        )
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                other = f" (0: {zero})" if zero else ""
                fail(
                    f"cannot listen on {host}:{port} for {purpose}: port {port} is in use "
                    "(another program, or another cardshark serve, tournament or bot test); "
                    f"choose another with {port_flag} PORT{other}{then}"
                )
            fail(
                f"cannot listen on {what} {host!r}: {exc.strerror}; give an address of this "
                "machine, e.g. 127.0.0.1 or 0.0.0.0"
            )


def remote_port(host: str, port: int) -> int:
    """The port remote bots dial (port, or REMOTE_PORT for 0), refused in one line if taken."""
    chosen = port or REMOTE_PORT
    check_listen(host, chosen, purpose="remote bots", zero=None, then=REMOTE_HINT)
    return chosen


def sqlite_path(db: str | None) -> Path | None:
    """The SQLite file a --db names (None for another database or one in memory)."""
    url = parse_url(db)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database or "").expanduser()


def require_database_folder(db: str | None) -> None:
    """Refuse a SQLite file whose folder does not exist: no command makes folders unasked."""
    path = sqlite_path(db)
    if path is not None and not path.parent.is_dir():
        fail(
            f"no folder {path.parent} for the database {path}; create it first "
            f"(mkdir -p {path.parent}) or give --db another file"
        )


def database_name(store: Store) -> str:
    """The database as a person names it: a SQLite file's path as given, else its URL."""
    url = store.engine.url
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return str(url.database)
    return store.url


def log_directory(path: Path, option: str | None = "--log-dir") -> Path:
    """The directory of the bots' stderr logs: made if missing, saying so in one line."""
    if path.is_dir():
        return path
    other = f" (or name another with {option})" if option else ""
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        fail(f"cannot create the log directory {path}: {exc.strerror or exc}{other}")
    errors.print(
        f"created directory {path} for the bots' stderr logs{other}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return path


def require_existing_database(db: str | None) -> None:
    """Refuse, naming the path, a SQLite file that does not exist."""
    url = parse_url(db)
    path = url.database
    if url.get_backend_name() != "sqlite" or path in (None, "", ":memory:"):
        return
    assert path is not None
    if not Path(path).expanduser().exists():
        source = "--db" if db is not None else f"the default {DEFAULT_URL}"
        fail(
            f"no database at {Path(path).expanduser().resolve()} (from {source}); "
            "`cardshark demo` or `cardshark bot add` create one, "
            "or name another with --db or CARDSHARK_DB"
        )


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`name=value` pairs with true/false and integers typed."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            fail(
                f"bad --option {pair!r}; expected NAME=VALUE "
                "(`cardshark games` lists each game's options)"
            )
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        out[name] = value
    return out


def command_group(help_text: str) -> typer.Typer:
    """A command group (bot, tournament, ...) with plain help: names, never types."""
    return typer.Typer(help=help_text, no_args_is_help=True, rich_markup_mode=None)
