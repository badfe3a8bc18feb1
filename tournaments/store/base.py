"""The store's machinery: engine, read sessions, serialised write transactions, row lookups."""

# Every write goes through _write: an in-process lock per database, then one transaction
# that starts with BEGIN IMMEDIATE on SQLite and locks the ratings table on PostgreSQL, so
# concurrent writers never read stale ratings (DESIGN §6 measured 12-13 % lost updates with
# read-modify-commit). A write that changes no rating and locks the rows it changes (a
# match's start, a staged result) skips the table lock. Nothing is retried: a failed write is
# rolled back and raised.

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Self

from sqlalchemy import Engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlmodel import Session, col, select

from tournaments import db
from tournaments.errors import (
    DatabaseUnavailableError,
    StorageError,
    UnknownBotError,
    UnknownMatchError,
    UnknownTournamentError,
)
from tournaments.models import Bot, Match, Tournament

_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


class StoreBase:
    """What every part of Store shares: the engine, sessions, serialised writes, lookups."""

    def __init__(self, url: str | URL | None = None, *, echo: bool = False) -> None:
        self.engine: Engine = db.make_engine(url, echo=echo)
        self._shown_url = db.safe_url(self.engine.url)
        self._sqlite = db.is_sqlite(self.engine)
        self._write_engine = self.engine.execution_options(**{db.SQLITE_BEGIN: "IMMEDIATE"})
        key = self.engine.url.render_as_string(hide_password=False)
        with _WRITE_LOCKS_GUARD:
            self._write_lock = _WRITE_LOCKS.setdefault(key, threading.Lock())

    @property
    def url(self) -> str:
        """The database URL with any password masked."""
        return self._shown_url

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ---------------------------------------------------------------------

    @contextmanager
    def _read(self) -> Iterator[Session]:
        try:
            with Session(self.engine, expire_on_commit=False) as session:
                yield session
        except SQLAlchemyError as exc:
            raise self._storage_error(exc) from exc

    @contextmanager
    def _write(self, *, ratings: bool = True) -> Iterator[Session]:
        # ratings=False: a write that touches no rating and locks the rows it changes (a
        # match's start, a staged result) need not queue behind other processes' recording.
        with self._write_lock:
            try:
                with Session(self._write_engine, expire_on_commit=False) as session:
                    if ratings and not self._sqlite:
                        # Serialises writers across processes; plain reads are not blocked.
                        session.connection().exec_driver_sql(
                            "LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE"
                        )
                    yield session
                    session.commit()
            except SQLAlchemyError as exc:
                raise self._storage_error(exc) from exc

    def _storage_error(self, exc: SQLAlchemyError) -> StorageError:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        if isinstance(exc, DBAPIError) and (
            exc.connection_invalidated
            or type(exc).__name__ in ("OperationalError", "InterfaceError")
        ):
            return DatabaseUnavailableError(self._shown_url, reason)
        return StorageError(f"database error on {self._shown_url}: {reason}")

    # -- row lookups every part shares ------------------------------------------------------

    def _bot(self, session: Session, key: int | str, *, include_removed: bool) -> Bot:
        query = select(Bot).where(Bot.id == key if isinstance(key, int) else Bot.name == key)
        bot = session.exec(query).first()
        if bot is None or (bot.removed is not None and not include_removed):
            names = session.exec(select(Bot.name).where(col(Bot.removed).is_(None))).all()
            raise UnknownBotError(key, names)
        return bot

    def _tournament(self, session: Session, tournament_id: int) -> Tournament:
        tournament = session.get(Tournament, tournament_id)
        if tournament is None:
            raise UnknownTournamentError(tournament_id)
        return tournament

    def _match(self, session: Session, match_id: int, *, lock: bool) -> Match:
        query = select(Match).where(Match.id == match_id)
        if lock:
            query = query.with_for_update()
        match = session.exec(query).first()
        if match is None:
            raise UnknownMatchError(match_id)
        return match
