"""procrastinate's tables on PostgreSQL: `cardshark db upgrade` creates them and applies its
newer migrations once; `tournament create` and workers still make them on first use, and a
worker refuses a queue older than its procrastinate in one line."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import procrastinate
import psycopg

from server.workers.queue import BASELINE, VERSION_TABLE, migrations, newest, upgrade_queue
from server.workers.worker import conninfo, make_app

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ",".join(f"house:knaves:noise={n}" for n in ("0", "0.5", "1"))


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def queue_version(url: str) -> str | None:
    with psycopg.connect(conninfo(url)) as conn:
        row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
    return None if row is None else str(row[0])


def has_table(url: str, name: str) -> bool:
    with psycopg.connect(conninfo(url)) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    return bool(row and row[0])


def test_db_upgrade_makes_the_queue_then_applies_newer_migrations_once(
    postgres_database: str, tmp_path: Path
) -> None:
    made = cli("db", "upgrade", "--db", postgres_database)
    assert made.returncode == 0, made.stderr
    assert f"task queue: created at procrastinate migration {newest()}" in made.stdout
    assert has_table(postgres_database, "procrastinate_jobs")
    assert queue_version(postgres_database) == newest()
    again = cli("db", "upgrade", "--db", postgres_database)
    assert f"task queue: at procrastinate migration {newest()}; nothing to do" in again.stdout

    # A later procrastinate ships a migration: applied once, recorded, not applied again.
    shipped = tmp_path / "migrations"
    shipped.mkdir()
    for script in migrations():
        shutil.copy(script, shipped)
    (shipped / "99.00.00_01_add_probe.sql").write_text(
        "CREATE TABLE procrastinate_probe (n integer);\n"
        "INSERT INTO procrastinate_probe VALUES (1);\n"
    )
    with psycopg.connect(conninfo(postgres_database)) as conn:
        assert upgrade_queue(conn, shipped) == (newest(), "99.00.00_01_add_probe")
        assert upgrade_queue(conn, shipped) == ("99.00.00_01_add_probe",) * 2
        assert conn.execute("SELECT count(*) FROM procrastinate_probe").fetchone() == (1,)


def test_the_queue_is_still_made_on_first_use_and_an_old_one_refused(
    postgres_database: str, tmp_path: Path
) -> None:
    created = cli("tournament", "create", "knaves", "--bots", HOUSE, "--db", postgres_database)
    assert "queued 6 matches" in created.stdout, created.stdout + created.stderr
    assert queue_version(postgres_database) == newest()

    # A queue made by a cardshark from before the version table: taken to be at BASELINE.
    with psycopg.connect(conninfo(postgres_database)) as conn:
        conn.execute(f"DROP TABLE {VERSION_TABLE}")
    upgraded = cli("db", "upgrade", "--db", postgres_database)
    assert upgraded.returncode == 0, upgraded.stderr
    said = "task queue: at" if newest() == BASELINE else "task queue: upgraded from"
    assert f"{said} procrastinate migration {BASELINE}" in upgraded.stdout
    assert queue_version(postgres_database) == newest()

    # A queue older than this procrastinate: a worker refuses it until `db upgrade`.
    with psycopg.connect(conninfo(postgres_database)) as conn:
        conn.execute(f"UPDATE {VERSION_TABLE} SET version = '03.00.00_01_old'")
    refused = cli("worker", "--db", postgres_database, "--until-empty", "--log-dir", str(tmp_path))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "the task queue's schema is at procrastinate migration 03.00.00_01_old" in lines[0]
    assert "run `cardshark db upgrade` with the same --db first" in lines[0]
    with psycopg.connect(conninfo(postgres_database)) as conn:
        assert conn.execute("SELECT count(*) FROM procrastinate_jobs").fetchone() == (6,)


async def _synchronous_commit(url: str, *, durable: bool) -> str:
    app = make_app(url, durable=durable)
    async with app.open_async():
        connector = app.connector
        assert isinstance(connector, procrastinate.PsycopgConnector)
        async with connector.pool.connection() as conn:
            cursor = await conn.execute("SHOW synchronous_commit")
            row = await cursor.fetchone()
    assert row is not None
    return str(row[0])


def test_a_workers_queue_changes_skip_the_disk_flush_and_deferring_jobs_does_not(
    postgres_database: str,
) -> None:
    # A worker's own changes may be lost in a crash of PostgreSQL (the job is taken again and
    # finds its match recorded); the jobs `tournament create` defers must not be. The test
    # server does not flush at all: this database is made to, as a production one would.
    with psycopg.connect(conninfo(postgres_database), autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        assert name is not None
        conn.execute(f'ALTER DATABASE "{name[0]}" SET synchronous_commit = on')
    assert asyncio.run(_synchronous_commit(postgres_database, durable=False)) == "off"
    assert asyncio.run(_synchronous_commit(postgres_database, durable=True)) == "on"


def test_upgrade_creates_the_queue_in_one_go_and_takes_an_unversioned_one_for_the_baseline(
    postgres_database: str,
) -> None:
    with psycopg.connect(conninfo(postgres_database)) as conn:
        assert upgrade_queue(conn) == (None, newest())  # no tables: made at the newest
        assert conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchall() == [(newest(),)]
        made = conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL").fetchone()
        assert made == (True,)
        assert upgrade_queue(conn) == (newest(), newest())
        assert conn.execute(f"SELECT count(*) FROM {VERSION_TABLE}").fetchone() == (1,)
        conn.execute(f"DROP TABLE {VERSION_TABLE}")
        # Tables from before the version table: at BASELINE, upgraded from there.
        assert upgrade_queue(conn) == (BASELINE, newest())
        assert conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchall() == [(newest(),)]
    assert [m.stem for m in migrations()] == sorted(m.stem for m in migrations())
    assert migrations()[-1].stem == newest() >= BASELINE
