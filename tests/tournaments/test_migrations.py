"""Alembic schema migrations on SQLite and PostgreSQL: revision 0001 is the first released
schema, an upgrade from it keeps every row, and a database at another revision is refused."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, MetaData, Table, insert, inspect, select, text
from sqlmodel import SQLModel

from tournaments import schema
from tournaments.db import make_engine, upgrade_schema
from tournaments.errors import SchemaNewerError, SchemaOutdatedError
from tournaments.models import BotArchive
from tournaments.ratings import RATING_METHOD, SeatOutcome
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
FIRST_SCHEMA_SQLITE = Path(__file__).parent / "fixtures" / "first_schema.sqlite.sql"
WHEN = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
SEED = 4382024330412385

# A knaves tournament of three bots as the first released cardshark stored it: one rotation
# set played and rated, a voided match replayed, the rest pending; one table per table name.
FIRST_ROWS: dict[str, list[dict[str, Any]]] = {
    "bots": [
        {
            "id": 1,
            "name": "ada",
            "token_hash": "a" * 64,
            "command": "python3 a.py",
            "created": WHEN,
            "removed": None,
        },
        {
            "id": 2,
            "name": "bob",
            "token_hash": "b" * 64,
            "command": None,
            "created": WHEN,
            "removed": None,
        },
        {
            "id": 3,
            "name": "cy",
            "token_hash": "c" * 64,
            "command": "./cy",
            "created": WHEN,
            "removed": WHEN,
        },
    ],
    "tournaments": [
        {
            "id": 1,
            "name": "first",
            "game": "knaves",
            "options": {"deals": 2},
            "format": "round_robin",
            "seats": 3,
            "rounds": 2,
            "tables": None,
            "seed": 7,
            "clock_ms": 1000,
            "bank_ms": 0,
            "ts_mu": 25.0,
            "ts_sigma": 25 / 3,
            "ts_beta": 25 / 6,
            "ts_tau": 25 / 300,
            "ts_draw_probability": 0.1,
            "status": "interrupted",
            "created": WHEN,
        },
    ],
    "tournament_goals": [{"tournament_id": 1, "confidence": 0.95, "max_rounds": 4}],
    "tournament_entrants": [{"tournament_id": 1, "position": p, "bot_id": p + 1} for p in range(3)],
    "matches": [
        {
            "id": i + 1,
            "tournament_id": 1,
            "schedule_index": i,
            "attempt": 0,
            "round": i // 3,
            "table_index": 0,
            "rotation": i % 3,
            "seed": SEED + i // 3,
            "seats": [(i + k) % 3 + 1 for k in range(3)],
            "status": "finished" if i < 3 else "voided" if i == 3 else "pending",
            "result": {"scores": [3.0, 1.0, 0.0]} if i < 3 else None,
            "record": {"moves": ["7H", "QS"]} if i < 3 else None,
            "started": WHEN if i <= 3 else None,
            "finished": WHEN if i < 3 else None,
        }
        for i in range(6)
    ]
    + [
        {
            "id": 7,
            "tournament_id": 1,
            "schedule_index": 3,
            "attempt": 1,
            "round": 1,
            "table_index": 0,
            "rotation": 0,
            "seed": SEED + 1,
            "seats": [1, 2, 3],
            "status": "pending",
            "result": None,
            "record": None,
            "started": None,
            "finished": None,
        },
    ],
    "seat_results": [
        {
            "id": 3 * m + s + 1,
            "match_id": m + 1,
            "seat": s,
            "bot_id": (m + s) % 3 + 1,
            "score": [3.0, 1.0, 0.0][s],
            "rank": s + 1,
            "faults": int(s == 2),
            "forfeited": False,
        }
        for m in range(3)
        for s in range(3)
    ],
    "ratings": [
        {
            "bot_id": b,
            "game": "knaves",
            "mu": 25.0 + b / 7,
            "sigma": 8.0 - b / 9,
            "matches": 3,
            "score_sum": 4.0,
            "faults": 1,
        }
        for b in (1, 2, 3)
    ],
    "rating_history": [
        {
            "id": b,
            "bot_id": b,
            "game": "knaves",
            "match_id": 3,
            "mu_before": 25.0,
            "sigma_before": 25 / 3,
            "mu_after": 25.0 + b / 7,
            "sigma_after": 8.0 - b / 9,
        }
        for b in (1, 2, 3)
    ],
    "rating_method": [{"id": 1, "version": RATING_METHOD}],
}


# Columns later revisions added to FIRST_ROWS's tables, with the value an upgrade gives old rows.
ADDED_SINCE: dict[str, dict[str, Any]] = {
    # author_id: the house author, made by 0008 to own them.
    "bots": {"code_digest": None, "author_id": 1, "version": 1, "prior_mu": None},
    "tournaments": {"worker": None},
    "ratings": {"last_tournament_id": 1},  # from the rating history: tournament 1 rated them
}


def upgraded(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """FIRST_ROWS as they read at the head revision: every added column at its default."""
    return {
        name: [{**row, **ADDED_SINCE.get(name, {})} for row in table]
        for name, table in rows.items()
    }


def first_schema_database(url: str, *, versioned: bool = True) -> None:
    """A database built by revision 0001 holding FIRST_ROWS (unversioned: as before Alembic)."""
    upgrade_schema(url, "0001")
    engine = make_engine(url, check_schema=False)
    try:
        with engine.begin() as connection:
            for name, rows in FIRST_ROWS.items():
                # The table as 0001 made it: today's model would also insert later columns.
                table = Table(name, MetaData(), autoload_with=connection)
                connection.execute(insert(table), rows)
            if not versioned:
                connection.execute(text(f"DROP TABLE {schema.VERSION_TABLE}"))
            if engine.dialect.name == "postgresql":
                # Rows inserted with explicit ids leave the sequences behind, as a dump would not.
                for name in ("bots", "tournaments", "matches", "seat_results", "rating_history"):
                    connection.execute(
                        text(
                            f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                            f"(SELECT max(id) FROM {name}))"
                        )
                    )
    finally:
        engine.dispose()


def table_rows(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as connection:
        for name in FIRST_ROWS:
            table = SQLModel.metadata.tables[name]
            query = select(table).order_by(*table.primary_key.columns)
            out[name] = [dict(row._mapping) for row in connection.execute(query)]
    return out


def revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return schema.revision_of(connection)


def schema_drift(engine: Engine) -> list[Any]:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, SQLModel.metadata))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_revision_0001_is_exactly_the_sqlite_schema_of_the_first_release(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'first.db'}"
    upgrade_schema(url, "0001")
    engine = make_engine(url, check_schema=False)
    try:
        with engine.connect() as connection:
            made = connection.execute(
                text(
                    "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                    f"AND tbl_name != '{schema.VERSION_TABLE}' ORDER BY type, name"
                )
            ).scalars()
            got = [" ".join(sql.split()) for sql in made]
    finally:
        engine.dispose()
    released = re.sub(r"^--.*$", "", FIRST_SCHEMA_SQLITE.read_text(), flags=re.M)
    want = [" ".join(s.split()) for s in released.split(";") if s.strip()]
    assert got == want


def test_a_new_database_is_made_at_head_and_both_ways_to_head_match_the_models(
    db_url: str,
) -> None:
    with Store(db_url) as store:
        assert revision(store.engine) == schema.head()
        assert schema_drift(store.engine) == []
        with store.engine.begin() as connection:
            for name in reversed(SQLModel.metadata.sorted_tables):
                connection.execute(text(f'DROP TABLE "{name.name}"'))
            connection.execute(text(f"DROP TABLE {schema.VERSION_TABLE}"))
    upgrade_schema(db_url, "0001")
    assert upgrade_schema(db_url) == ("0001", schema.head())
    engine = make_engine(db_url)
    try:
        assert schema_drift(engine) == []
        indexes = {i["name"] for i in inspect(engine).get_indexes("matches")}
        assert "ix_matches_set" in indexes
    finally:
        engine.dispose()


@pytest.mark.parametrize("versioned", [True, False], ids=["revision-0001", "before-alembic"])
def test_upgrade_from_the_first_schema_keeps_every_row_and_the_store_works_on(
    db_url: str, versioned: bool
) -> None:
    first_schema_database(db_url, versioned=versioned)
    with pytest.raises(SchemaOutdatedError, match="needs revision") as refused:
        Store(db_url)
    assert refused.value.found == ("0001" if versioned else None)

    before, after = upgrade_schema(db_url)
    assert (before, after) == ("0001" if versioned else None, schema.head())
    assert upgrade_schema(db_url) == (schema.head(), schema.head())  # a second run: nothing

    with Store(db_url) as store:
        assert table_rows(store.engine) == upgraded(FIRST_ROWS)
        # The upgraded database plays on: the open set's three matches are recorded and rated.
        open_set = [m for m in store.pending_matches(1)]
        assert sorted(m.schedule_index for m in open_set) == [3, 4, 5]
        for match in open_set:
            assert match.id is not None
            store.record_result(match.id, [SeatOutcome(2.0), SeatOutcome(1.0), SeatOutcome(0.0)])
        live = {b: (r.mu, r.sigma, r.matches) for b, r in store.ratings("knaves").items()}
        assert {m for _, _, m in live.values()} == {6}
        assert live != {r["bot_id"]: (r["mu"], r["sigma"], 3) for r in FIRST_ROWS["ratings"]}
        assert store.recompute("knaves") == 6
        assert {r.matches for r in store.ratings("knaves").values()} == {6}


def test_a_database_of_a_newer_cardshark_is_refused(db_url: str) -> None:
    Store(db_url).close()
    engine = make_engine(db_url)
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE {schema.VERSION_TABLE} SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(SchemaNewerError, match="revision 9999"):
        Store(db_url)
    with pytest.raises(SchemaNewerError):
        upgrade_schema(db_url)


@pytest.mark.parametrize("versioned", [True, False], ids=["revision-0001", "before-alembic"])
def test_every_command_refuses_an_old_schema_in_one_line_until_db_upgrade(
    db_url: str, versioned: bool
) -> None:
    first_schema_database(db_url, versioned=versioned)
    for command, args in (("bot list", []), ("rankings", ["knaves"]), ("tournament list", [])):
        run = cli(*command.split(), *args, "--db", db_url)
        assert run.returncode == 2, run.stdout + run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and run.stdout == "", run.stderr
        assert f"`cardshark {command}` cannot run" in lines[0]
        assert "run `cardshark db upgrade` with the same --db first" in lines[0]
        assert "Traceback" not in run.stderr

    upgraded = cli("db", "upgrade", "--db", db_url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"to revision {schema.head()}" in upgraded.stdout
    listed = cli("bot", "list", "--db", db_url)
    assert listed.returncode == 0, listed.stderr
    assert "ada" in listed.stdout and "bob" in listed.stdout


def test_revision_0004_stores_bot_code_once_per_digest_after_an_upgrade(db_url: str) -> None:
    first_schema_database(db_url)
    upgrade_schema(db_url)
    code = BotArchive(digest="d" * 64, data=b"tar.gz bytes", size=10240)
    with Store(db_url) as store:
        assert {b.name: b.code_digest for b in store.list_bots()} == {"ada": None, "bob": None}
        one, _ = store.add_bot("coded", "python3 bot.py", code)
        two, _ = store.add_bot("coded-too", "python3 bot.py", code.model_copy())
        assert one.code_digest == two.code_digest == "d" * 64
        assert store.bot_archive("d" * 64) == b"tar.gz bytes"
        with store.engine.connect() as connection:
            stored = connection.execute(text("SELECT count(*) FROM bot_archives")).scalar()
        assert stored == 1  # stored once, named by both
        assert store.remove_bot("coded") == "deleted"
        assert store.bot_archive("d" * 64) == b"tar.gz bytes"  # coded-too still names it
        assert store.remove_bot("coded-too") == "deleted"
        assert store.bot_archive("d" * 64) is None
