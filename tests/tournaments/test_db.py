"""Engine setup: SQLite pragmas, default file, typed errors for bad or unreachable databases."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    DBAPIError,
    IntegrityError,
    InterfaceError,
    NoResultFound,
    OperationalError,
)

from tournaments.db import DEFAULT_URL, make_engine, parse_url
from tournaments.errors import DatabaseUnavailableError, DatabaseUrlError, StorageError
from tournaments.store import Store


def test_sqlite_connections_use_wal_normal_sync_and_a_long_busy_timeout(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
            assert int(conn.execute(text("PRAGMA busy_timeout")).scalar() or 0) >= 5000
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    finally:
        engine.dispose()


def test_default_url_creates_cardshark_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert DEFAULT_URL == "sqlite:///./cardshark.db"
    monkeypatch.chdir(tmp_path)
    with Store() as store:
        store.add_bot("first")
    assert (tmp_path / "cardshark.db").is_file()
    with Store(f"sqlite:///{tmp_path / 'nested' / 'dir' / 'c.db'}") as store:
        assert store.list_bots() == []
    assert (tmp_path / "nested" / "dir" / "c.db").is_file()


@pytest.mark.parametrize(
    "url", ["postgresql:/db", "nosuchdialect://x/y", "postgresql+nosuchdriver://u@localhost/db"]
)
def test_bad_urls_raise_a_typed_error(url: str) -> None:
    with pytest.raises(DatabaseUrlError, match="bad database URL"):
        make_engine(url)


def test_a_text_without_a_scheme_is_a_sqlite_file(tmp_path: Path) -> None:
    assert parse_url("./x.db") == make_url("sqlite:///./x.db")
    assert parse_url(str(tmp_path / "x.db")) == make_url(f"sqlite:///{tmp_path / 'x.db'}")
    with Store(str(tmp_path / "plain.db")) as store:
        store.add_bot("first")
    assert (tmp_path / "plain.db").is_file()


def test_an_unreachable_server_raises_a_typed_error_naming_it() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql+psycopg://someone:secret@127.0.0.1:{port}/nothing"
    with pytest.raises(DatabaseUnavailableError) as caught:
        make_engine(url)
    assert f"127.0.0.1:{port}" in str(caught.value) and "secret" not in str(caught.value)


def test_an_unopenable_sqlite_file_raises_a_typed_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DatabaseUnavailableError):
        make_engine(f"sqlite:///{blocker / 'sub' / 'c.db'}")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a sqlite database" * 100)
    with pytest.raises(DatabaseUnavailableError, match="garbage.db"):
        make_engine(f"sqlite:///{garbage}")


def test_in_memory_sqlite_works_across_threads() -> None:
    with Store("sqlite://") as store:
        store.add_bot("a")
        assert [b.name for b in store.list_bots()] == ["a"]


def test_a_write_that_times_out_on_a_locked_sqlite_file_leaves_no_open_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from tournaments import db
    from tournaments.ratings import SeatOutcome

    path = tmp_path / "busy.db"
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 200)
    with Store(f"sqlite:///{path}") as store:
        ids = [store.add_bot(name)[0].id for name in ("a", "b", "c")]
        t = store.create_tournament("knaves", [i for i in ids if i is not None], seed=1)
        assert t.id is not None
        m = store.pending_matches(t.id)[0]
        assert m.id is not None
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        with pytest.raises(DatabaseUnavailableError) as locked:
            store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
        assert str(locked.value) == f"database sqlite:///{path} is unavailable: database is locked"
        other.execute("ROLLBACK")
        other.close()
        # nothing of the failed attempt landed, and the pooled connection is clean
        assert store.get_match(m.id).status == "pending"
        assert store.seat_results(m.id) == []
        store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
        assert len(store.seat_results(m.id)) == 3
        assert {r.matches for r in store.ratings("knaves").values()} == {1}


def test_a_store_opened_with_echo_logs_its_sql_and_one_without_does_not(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'echo.db'}", echo=True) as loud:
        assert loud.engine.echo is True
    with Store(f"sqlite:///{tmp_path / 'echo.db'}") as quiet:
        assert quiet.engine.echo is False


def test_a_refused_write_is_a_storage_error_with_the_databases_own_words(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'refuse.db'}"
    with Store(url) as store:
        for name in ("a", "b", "c"):
            store.add_bot(name)
        with store.engine.begin() as conn:  # the database itself refuses every new tournament
            conn.exec_driver_sql(
                "CREATE TRIGGER no_more BEFORE INSERT ON tournaments "
                "BEGIN SELECT RAISE(ABORT, 'no more tournaments\nsecond line'); END"
            )
        with pytest.raises(StorageError) as refused:
            store.create_tournament("knaves", ["a", "b", "c"])
        assert type(refused.value) is StorageError  # the database is there: not unavailable
        assert str(refused.value) == f"database error on {url}: no more tournaments"


def test_a_lost_connection_is_the_database_unavailable_naming_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lost.db'}"
    with Store(url) as store:
        for error in (OperationalError, InterfaceError):
            lost = store._storage_error(error("SELECT 1", {}, Exception("connection closed\n…")))
            assert type(lost) is DatabaseUnavailableError
            assert str(lost) == f"database {url} is unavailable: connection closed"
        invalidated = DBAPIError("SELECT 1", {}, Exception("gone"), connection_invalidated=True)
        assert type(store._storage_error(invalidated)) is DatabaseUnavailableError
        other = store._storage_error(IntegrityError("INSERT", {}, Exception("UNIQUE failed")))
        assert type(other) is StorageError
        assert str(other) == f"database error on {url}: UNIQUE failed"
        none = store._storage_error(NoResultFound("No row was found when one was required"))
        assert str(none) == f"database error on {url}: No row was found when one was required"
