"""Engine setup: SQLite pragmas and BEGIN modes, PostgreSQL options, the schema's version."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from tournaments import models as _models  # noqa: F401  (registers the tables)
from tournaments import schema
from tournaments.errors import DatabaseUnavailableError, DatabaseUrlError, TournamentError

DEFAULT_URL = "sqlite:///./cardshark.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
POSTGRES_CONNECT_TIMEOUT_S = 10

_SCHEMA_LOCK_KEY = 0x63617264  # "card"

# A text that starts like a URL ("postgresql:/db", "sqlite:x.db") is a mistyped URL, not a path.
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?!//)")
URL_FORMS = "give a SQLite file's path (./cardshark.db) or a URL (postgresql://USER@HOST/DB)"

# Execution option read by the "begin" listener: the SQLite BEGIN mode of a transaction.
SQLITE_BEGIN = "cardshark_sqlite_begin"


def parse_url(url: str | URL | None) -> URL:
    """The URL as a SQLAlchemy URL (DEFAULT_URL when None), or DatabaseUrlError; a text
    without a scheme (./x.db, /tmp/x.db) is the path of a SQLite file."""
    text = DEFAULT_URL if url is None else url
    if isinstance(text, str) and text and "://" not in text:
        if SCHEME.match(text):
            raise DatabaseUrlError(text, f"a URL's scheme ends in '://'; {URL_FORMS}")
        return URL.create("sqlite", database=text)
    try:
        parsed = make_url(text)
    except (ArgumentError, ValueError) as exc:
        raise DatabaseUrlError(str(text), f"{exc}; {URL_FORMS}") from exc
    if parsed.drivername == "postgresql":
        # SQLAlchemy's default PostgreSQL driver is psycopg2; ours is psycopg (3).
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def safe_url(url: URL) -> str:
    """The URL as text with any password masked, for messages and logs."""
    return url.render_as_string(hide_password=True)


def is_sqlite(engine: Engine) -> bool:
    """True when the engine talks to SQLite."""
    return engine.dialect.name == "sqlite"


def make_engine(
    url: str | URL | None = None, *, echo: bool = False, check_schema: bool = True
) -> Engine:
    """An engine for url (default ./cardshark.db), connected once; an empty database gets the
    schema at the head revision, and one at another revision is refused (SchemaVersionError)
    unless check_schema is False (for the upgrade itself)."""
    parsed = parse_url(url)
    shown = safe_url(parsed)
    kwargs: dict[str, Any] = {"echo": echo}
    sqlite = parsed.get_backend_name() == "sqlite"
    memory = sqlite and parsed.database in (None, "", ":memory:")
    if sqlite:
        # The driver's own transaction handling is off; the "begin" listener emits BEGIN.
        kwargs["connect_args"] = {"check_same_thread": False}
        if memory:
            kwargs["poolclass"] = StaticPool
        elif parsed.database:
            _ensure_parent(Path(parsed.database), shown)
    elif parsed.get_backend_name() == "postgresql":
        kwargs["connect_args"] = {"connect_timeout": POSTGRES_CONNECT_TIMEOUT_S}
        kwargs["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **kwargs)
    except ImportError as exc:
        if parsed.get_backend_name() == "postgresql":
            reason = f"PostgreSQL needs psycopg: pip install 'cardshark[postgres]' ({exc})"
            raise DatabaseUrlError(shown, reason) from exc
        raise DatabaseUrlError(shown, str(exc)) from exc
    except (ArgumentError, NoSuchModuleError) as exc:
        raise DatabaseUrlError(shown, f"{exc}; {URL_FORMS}") from exc
    if sqlite:
        # WAL, synchronous=NORMAL, busy timeout, foreign keys; BEGIN (IMMEDIATE for writers).
        _install_sqlite_listeners(engine, wal=not memory)
    try:
        with schema_transaction(engine) as connection:
            if check_schema:
                schema.prepare(connection, shown)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise DatabaseUnavailableError(shown, _reason(exc)) from exc
    except TournamentError:
        engine.dispose()
        raise
    return engine


@contextmanager
def schema_transaction(engine: Engine) -> Iterator[Connection]:
    """A write transaction that no other process changing the schema runs beside."""
    with engine.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"}).begin() as connection:
        if engine.dialect.name == "postgresql":
            # Two processes opening a fresh database must not both create the tables.
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK_KEY})")
        yield connection


def upgrade_schema(url: str | URL | None = None, target: str = "head") -> tuple[str | None, str]:
    """Migrate the database at url to the target revision; returns (before, after)."""
    engine = make_engine(url, check_schema=False)
    try:
        with schema_transaction(engine) as connection:
            return schema.upgrade(connection, safe_url(engine.url), target)
    except SQLAlchemyError as exc:
        raise DatabaseUnavailableError(safe_url(engine.url), _reason(exc)) from exc
    finally:
        engine.dispose()


def _ensure_parent(path: Path, shown: str) -> None:
    try:
        path.expanduser().parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnavailableError(shown, f"cannot create its folder: {exc}") from exc


def _reason(exc: SQLAlchemyError) -> str:
    original = getattr(exc, "orig", None)
    return str(original if original is not None else exc).strip().splitlines()[0]


def _install_sqlite_listeners(engine: Engine, *, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # isolation_level None stops pysqlite's implicit BEGINs so ours are the only ones.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            if wal:
                cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get(SQLITE_BEGIN, "DEFERRED")
        if mode not in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
            raise ValueError(f"unknown SQLite BEGIN mode {mode!r}")
        connection.exec_driver_sql(f"BEGIN {mode}")
