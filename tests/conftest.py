"""Shared fixtures: a throwaway PostgreSQL server per session and a fresh database per test.

`postgres_server` (session scope) starts PostgreSQL from Debian's `postgresql` package on
127.0.0.1 and a free port, in a temporary data directory, and yields a SQLAlchemy base URL
such as ``postgresql+psycopg://postgres@127.0.0.1:54321`` (append ``/dbname``). It fails,
never skips, when the server binaries are missing: CI installs them.

`db_url` is parametrized ``["sqlite", "postgresql"]``: a SQLite file in tmp_path, or a new
empty PostgreSQL database that is dropped after the test.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ROOT = Path("/usr/lib/postgresql")
PG_BINDIR_ENV = "CARDSHARK_PG_BINDIR"
PG_SUPERUSER = "postgres"


def _pg_bindir() -> Path:
    override = os.environ.get(PG_BINDIR_ENV)
    candidates = [Path(override)] if override else []
    if PG_ROOT.is_dir():
        versions = [p for p in PG_ROOT.iterdir() if (p / "bin" / "postgres").exists()]
        versions.sort(key=lambda p: [int(x) for x in re.findall(r"\d+", p.name)] or [0])
        candidates += [v / "bin" for v in reversed(versions)]
    for path in candidates:
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    pytest.fail(
        "PostgreSQL server binaries not found (looked for initdb and pg_ctl in "
        f"{', '.join(str(c) for c in candidates) or PG_ROOT / '<version>/bin'}). "
        "Install Debian's server package: apt-get install -y postgresql "
        f"(or point {PG_BINDIR_ENV} at a bin directory).",
        pytrace=False,
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(command: list[str], cwd: Path, what: str, log: Path | None = None) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        detail = (done.stdout + done.stderr).strip()
        if log is not None and log.exists():
            detail += "\n--- server log ---\n" + log.read_text(errors="replace")[-4000:]
        pytest.fail(f"{what} failed (exit {done.returncode}): {' '.join(command)}\n{detail}")


def admin_conninfo(base_url: str, database: str = "postgres") -> str:
    """A psycopg connection string for a database of the server behind base_url."""
    return base_url.replace("postgresql+psycopg://", "postgresql://", 1) + f"/{database}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A running PostgreSQL server for this test session; yields its SQLAlchemy base URL."""
    bindir = _pg_bindir()
    prefix: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="cardshark-pg-"))
    if os.geteuid() == 0:
        # postgres refuses to run as root: run it as the package's postgres user.
        try:
            user = pwd.getpwnam(PG_SUPERUSER)
        except KeyError:
            pytest.fail("running as root but there is no 'postgres' user to run the server as")
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", PG_SUPERUSER, "--"]
    root.chmod(0o700)
    data = root / "data"
    log = root / "server.log"
    _run(
        [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", PG_SUPERUSER]
        + ["-A", "trust", "-E", "UTF8", "--no-sync"],
        root,
        "initdb",
    )
    port = 0
    started = False
    for _ in range(3):
        port = _free_port()
        options = (
            f"-h 127.0.0.1 -p {port} -k {root} -F "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        command = [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log)]
        done = subprocess.run(
            [*command, "-w", "-t", "60", "-o", options, "start"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0:
            started = True
            break
    if not started:
        text = log.read_text(errors="replace")[-4000:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start (last port {port}):\n{text}")
    try:
        yield f"postgresql+psycopg://{PG_SUPERUSER}@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            cwd=root,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_server: str) -> Iterator[str]:
    """A new empty database on the session's server; yields its URL and drops it after."""
    import psycopg

    name = f"cardshark_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_conninfo(postgres_server), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{postgres_server}/{name}"
    finally:
        with psycopg.connect(admin_conninfo(postgres_server), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL for one test: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cardshark.db'}"
    return str(request.getfixturevalue("postgres_database"))
