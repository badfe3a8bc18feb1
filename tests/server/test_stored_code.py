"""Bots whose code is stored in the database (`bot add --dir`): played by `tournament run` on
SQLite and by `cardshark worker` processes on PostgreSQL after their source directory is gone;
every match record names the digest of the code that played each seat; inside the sandbox the
unpacked code is read-only; a hostile archive in the database is refused."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from tests.server.code_cache import entries
from tests.server.webkit import serve_web
from tournaments.models import BotArchive, MatchStatus
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
CARDSHARK = str(Path(sys.executable).with_name("cardshark"))
KNAVES_BOT = ROOT / "clients" / "python" / "examples" / "knaves_bot.py"
PROBE = '''"""Try to write into my own code directory, say how that went, then play Knaves."""
import errno
import runpy
import sys

try:
    with open("written-by-bot.txt", "w") as out:
        out.write("x")
    said = "writable"
except OSError as exc:
    said = errno.errorcode.get(exc.errno, str(exc.errno))
print(f"code dir: {said}", file=sys.stderr, flush=True)
runpy.run_path("knaves_bot.py", run_name="__main__")
'''
COMMAND = f"{sys.executable} probe.py"


def source(where: Path, comment: str = "") -> Path:
    """A bot directory: the Knaves example and a probe that runs it (relative paths only)."""
    where.mkdir(parents=True)
    shutil.copy(KNAVES_BOT, where / "knaves_bot.py")
    (where / "probe.py").write_text(PROBE + comment)
    return where


def cardshark(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [CARDSHARK, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def add_from_dirs(server: Path, db: str, tmp_path: Path) -> dict[str, str]:
    """Bots v1 and v1b from two copies of one tree, v2 from a changed tree; the trees are
    deleted after. Returns each bot's digest as `bot list --json` reports it."""
    trees = {
        "v1": source(tmp_path / "src" / "v1"),
        "v1b": source(tmp_path / "src" / "copy-made-later"),
        "v2": source(tmp_path / "src" / "v2", comment="# version 2\n"),
    }
    for name, tree in trees.items():
        added = cardshark(
            server, "bot", "add", name, "--dir", str(tree), "--command", COMMAND, "--db", db
        )
        assert added.returncode == 0, added.stderr
        assert "stored, 2 files" in added.stdout
    shutil.rmtree(tmp_path / "src")
    listed = cardshark(server, "bot", "list", "--json", "--db", db)
    assert listed.returncode == 0, listed.stderr
    return {b["name"]: b["code_digest"] for b in json.loads(listed.stdout)}


def played(store: Store) -> dict[int, tuple[list[str], list[Any], list[str | None]]]:
    """Per schedule index: the seated bots' names, their scores, the code digest per seat."""
    (tournament,) = store.list_tournaments()
    assert tournament.id is not None
    names = {b.id: b.name for b in store.list_bots()}
    out = {}
    for m in store.matches(tournament.id):
        assert m.status == MatchStatus.FINISHED.value, (m.schedule_index, m.status)
        record = m.record or {}
        out[m.schedule_index] = (
            [names[b] for b in m.seats],
            (m.result or {})["scores"],
            record["code"],
        )
    return out


def check_digests(digests: dict[str, str], rows: dict[int, Any]) -> None:
    """The same tree gave one digest, the changed tree another; each seat names its bot's."""
    assert digests["v1"] == digests["v1b"] != digests["v2"]
    for names, _, code in rows.values():
        assert code == [digests[n] for n in names]


def test_tournament_run_plays_code_from_the_database_read_only(tmp_path: Path) -> None:
    server, cache = tmp_path / "server", tmp_path / "cache"
    db = f"sqlite:///{server / 'cardshark.db'}"
    digests = add_from_dirs(server, db, tmp_path)
    run = cardshark(
        server,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "v1,v1b,v2",
        "--seed",
        "7",
        "--db",
        db,
        env={"CARDSHARK_BOT_CACHE": str(cache)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with Store(db) as store:
        rows = played(store)
        assert len(rows) == 6
        check_digests(digests, rows)
        assert {r.matches for r in store.ratings("knaves").values()} == {6}
        with Session(store.engine) as session:
            assert len(session.exec(select(BotArchive.digest)).all()) == 2  # stored once each
    # Unpacked once per digest, nothing else left in the cache; the bots could not write there.
    assert entries(cache) == sorted({digests["v1"], digests["v2"]})
    assert not list(cache.rglob("written-by-bot.txt"))
    for name in ("v1", "v1b", "v2"):
        log = (server / "logs" / "tournament-1" / f"{name}.stderr.log").read_text()
        assert "code dir: EROFS" in log, log  # a read-only mount, not only file modes
    # The match's transcript and its web page name the code each seat played.
    names, _, code = rows[0]
    shown = cardshark(server, "match", "show", "1", "--db", db)
    assert shown.returncode == 0, shown.stderr
    for seat, (name, digest) in enumerate(zip(names, code, strict=True)):
        assert f"seat {seat}: {name} (stored code sha256 {digest})" in shown.stdout
    with serve_web(db) as url, urllib.request.urlopen(f"{url}/matches/1") as page:
        html = page.read().decode()
    title = "SHA-256 of the stored code that played this seat"
    for name, digest in zip(names, code, strict=True):
        cell = f'{name}</a>\n      <code class="digest" title="{title}: {digest}">{digest[:12]}'
        assert cell in html, html

    # The same bots run from a path (bot add --command) play exactly the same matches.
    again = tmp_path / "by-path"
    paths = {name: source(tmp_path / "paths" / name) for name in ("v1", "v1b", "v2")}
    other = f"sqlite:///{again / 'cardshark.db'}"
    for name, tree in paths.items():
        command = f"{sys.executable} {tree / 'probe.py'}"
        assert (
            cardshark(again, "bot", "add", name, "--command", command, "--db", other).returncode
            == 0
        )
    run = cardshark(
        again,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "v1,v1b,v2",
        "--seed",
        "7",
        "--db",
        other,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with Store(other) as store:
        by_path = played(store)
    assert {i: r[:2] for i, r in by_path.items()} == {i: r[:2] for i, r in rows.items()}
    assert {tuple(r[2]) for r in by_path.values()} == {()}  # no stored code: none named
    shown = cardshark(again, "match", "show", "1", "--db", other)
    assert shown.returncode == 0 and "stored code" not in shown.stdout, shown.stdout


def test_workers_play_code_from_the_database_as_tournament_run_does(
    postgres_database: str, tmp_path: Path
) -> None:
    server = tmp_path / "server"
    upgraded = cardshark(server, "db", "upgrade", "--db", postgres_database)
    assert upgraded.returncode == 0, upgraded.stderr
    digests = add_from_dirs(server, postgres_database, tmp_path)
    created = cardshark(
        server,
        "tournament",
        "create",
        "knaves",
        "--bots",
        "v1,v1b,v2",
        "--seed",
        "7",
        "--db",
        postgres_database,
    )
    assert "queued 6 matches" in created.stdout, created.stdout + created.stderr
    # Two machines: each worker has a cache of its own; both stop once the queue is empty.
    workers = [
        subprocess.Popen(
            [CARDSHARK, "worker", "--db", postgres_database, "--name", name, "--until-empty"]
            + ["--log-dir", str(tmp_path / f"logs-{name}")]
            + ["--bot-cache", str(tmp_path / f"cache-{name}")],
            cwd=server,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in ("w1", "w2")
    ]
    try:
        outputs = [w.communicate(timeout=300)[0] for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGKILL)
                w.wait()
    assert [w.returncode for w in workers] == [0, 0], outputs
    counts = [int(o.split(" matches played")[0].split()[-1]) for o in outputs]
    assert sum(counts) == 6, outputs
    with Store(postgres_database) as store:
        rows = played(store)
    assert len(rows) == 6
    check_digests(digests, rows)
    for name, count in zip(("w1", "w2"), counts, strict=True):
        cache = tmp_path / f"cache-{name}"
        if count:  # the worker that played unpacked the code itself, from the database
            assert set(entries(cache)) <= {digests["v1"], digests["v2"]}

    # The same tournament by `tournament run` on SQLite: the same matches, the same scores.
    local = tmp_path / "local"
    db = f"sqlite:///{local / 'cardshark.db'}"
    assert add_from_dirs(local, db, tmp_path) == digests
    run = cardshark(
        local,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "v1,v1b,v2",
        "--seed",
        "7",
        "--db",
        db,
        env={"CARDSHARK_BOT_CACHE": str(tmp_path / "cache-local")},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with Store(db) as store:
        assert played(store) == rows


def hostile_tar() -> bytes:
    """A tar whose second member climbs out of the directory it is unpacked into."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("probe.py", PROBE.encode()), ("../../escaped.py", b"x = 1\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_hostile_archive_in_the_database_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    server, cache = tmp_path / "server", tmp_path / "deep" / "cache"
    db = f"sqlite:///{server / 'cardshark.db'}"
    tar = hostile_tar()
    digest = hashlib.sha256(tar).hexdigest()
    server.mkdir()
    with Store(db) as store:
        archive = BotArchive(digest=digest, data=gzip.compress(tar), size=len(tar))
        store.add_bot("evil", COMMAND, archive)
        for name in ("ok1", "ok2"):
            store.add_bot(name, f"{sys.executable} {KNAVES_BOT}")
    before = set(tmp_path.rglob("*"))
    run = cardshark(
        server,
        "tournament",
        "run",
        "knaves",
        "--bots",
        "evil,ok1,ok2",
        "--seed",
        "3",
        "--db",
        db,
        env={"CARDSHARK_BOT_CACHE": str(cache)},
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert (
        f"bot 'evil' could not be started: its stored code was refused: the stored archive "
        f"{digest[:12]}: member '../../escaped.py' leaves the directory ('..'); refused"
    ) in run.stderr
    assert "nothing was played or rated" in run.stderr
    made = set(tmp_path.rglob("*")) - before
    logs = server / "logs"
    outside = {p for p in made if p != cache and cache not in p.parents and p not in cache.parents}
    assert {p for p in outside if p != logs and logs not in p.parents} <= {
        server / f"cardshark.db{end}" for end in ("-wal", "-shm")
    }
    assert entries(cache) == []
    assert not list(tmp_path.rglob("escaped.py"))
    with Store(db) as store:
        (tournament,) = store.list_tournaments()
        assert tournament.id is not None
        assert {m.status for m in store.matches(tournament.id)} == {"pending"}
        assert store.ratings("knaves") == {}
