"""Authors submit bots to a real `cardshark serve` over gRPC with the kit's command line: a
verdict from the house bots, then play from the stored code; each author sees only their own."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cardshark.v1 import submissions_pb2 as pb
from cardshark.v1 import submissions_pb2_grpc
from server.bots.archive import pack_directory
from tests.server.test_admin import start_serve
from tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "python" / "examples"
CRASHING = """\
import sys
from cardshark_bot import run


def decide(request):
    print("boom: cannot read this view", file=sys.stderr, flush=True)
    raise SystemExit(3)


run(decide, name="crasher")
"""
ILLEGAL = """\
from cardshark_bot import run

run(lambda request: "play:ZZ", name="illegal")
"""


# Plays by the rules while tested (match ids "test-N"), illegally in tournaments.
TWO_FACED = """\
import sys
from cardshark_bot import run


def decide(request):
    if request.match_id.startswith("test-"):
        return request.legal_actions[0].id
    print(f"cheating in {request.match_id}", file=sys.stderr, flush=True)
    return "play:ZZ"


run(decide, name="two-faced")
"""
FIRST_LEGAL_CPP = (Path(__file__).parent / "bots" / "first_legal.cpp").read_text()
BRIDGED = "python3 -m cardshark_bot.bridge -- ./bot"


class Served:
    """A running `cardshark serve`, its database, and authors' keys in files."""

    def __init__(self, tmp_path: Path, *args: str, url: str | None = None) -> None:
        self.tmp = tmp_path
        self.db = tmp_path / "cs.db"
        self.url = url or f"sqlite:///{self.db}"
        # A later --db wins over start_serve's SQLite file.
        self.args = (*args, "--db", url) if url else args
        self.proc, self.address = start_serve(tmp_path, *self.args)

    def author(self, name: str) -> Path:
        with Store(self.url) as store:
            _, key = store.add_author(name)
        path = self.tmp / f"{name}.key"
        path.write_text(key + "\n")
        path.chmod(0o600)
        return path

    def kit(
        self, *args: str, command: str = "cardshark_bot.submit"
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", command, *args, "--server", self.address],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=self.tmp,
        )

    def submit(
        self,
        key: Path,
        directory: Path,
        name: str,
        *extra: str,
        command: str = "cardshark_bot.submit",
    ) -> list[dict[str, object]]:
        done = self.kit(
            "submit",
            str(directory),
            "--key-file",
            str(key),
            "--name",
            name,
            "--game",
            "knaves",
            "--command",
            "python3 bot.py",
            "--json",
            *extra,
            command=command,
        )
        assert done.returncode in (0, 1), done.stderr
        states = [json.loads(line) for line in done.stdout.splitlines()]
        assert (done.returncode == 0) == (states[-1]["state"] == "accepted")
        return states

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)
        self.proc.communicate(timeout=60)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.stop()


def bot_dir(tmp_path: Path, name: str, source: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "bot.py").write_text(source)
    return directory


def play_knaves(served: Served, bot: str) -> None:
    """A Knaves round robin of bot and two random bots, run by the CLI in its own process
    from served's directory (its logs/ are the server's)."""
    with Store(served.url) as store:
        for name in ("r1", "r2"):
            store.add_bot(name, f"python3 {EXAMPLES / 'random_bot.py'}")
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "tournament", "run", "knaves", "--bots",
         f"{bot},r1,r2", "--seed", "5", "--db", served.url],
        capture_output=True, text=True, timeout=300, cwd=served.tmp,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def stub(address: str) -> tuple[grpc.Channel, submissions_pb2_grpc.SubmissionsStub]:
    channel = grpc.insecure_channel(address)
    return channel, submissions_pb2_grpc.SubmissionsStub(channel)


def auth(key: Path) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {key.read_text().strip()}"),)


@pytest.fixture
def served_on(tmp_path: Path, db_url: str) -> Iterator[Served]:
    """Served on a SQLite file and on PostgreSQL."""
    server = Served(tmp_path, url=db_url)
    try:
        yield server
    finally:
        server.stop()


def test_an_accepted_submission_plays_the_next_tournament_from_its_stored_code(
    served_on: Served, tmp_path: Path
) -> None:
    served = served_on
    key = served.author("alice")
    source = bot_dir(tmp_path, "alpha-src", (EXAMPLES / "knaves_bot.py").read_text())
    states = served.submit(key, source, "alpha")
    assert [s["state"] for s in states][-2:] == ["testing", "accepted"]
    assert states[-1]["version"] == 1 and "PASS: 3 matches, 0 faults" in str(states[-1]["detail"])
    shutil.rmtree(source)  # what plays is the stored archive, not the author's directory
    with Store(served.url) as store:
        alpha = store.get_bot("alpha")
        assert alpha.code_digest == states[-1]["digest"] and alpha.command == "python3 bot.py"
        assert store.author_names()[alpha.author_id or 0] == "alice"
    play_knaves(served, "alpha")
    with Store(served.url) as store:
        row = next(r for r in store.rankings("knaves") if r.bot == "alpha")
    assert row.matches == 6 and row.faults == 0


def test_a_crashing_bot_is_rejected_with_the_request_and_its_stderr(
    served: Served, tmp_path: Path
) -> None:
    key = served.author("alice")
    # `cardshark submit`, on a machine with the server installed, is the kit's submit.
    states = served.submit(
        key, bot_dir(tmp_path, "crash", CRASHING), "crasher", command="server.cli"
    )
    last = states[-1]
    assert last["state"] == "rejected"
    detail = str(last["detail"])
    assert "knaves: FAIL" in detail and "boom: cannot read this view" in detail
    assert "legal: play:" in detail  # the request it failed on, with its legal actions
    with Store(served.url) as store:
        assert [b.name for b in store.list_bots()] == []  # nothing enters a schedule


def test_an_illegal_answer_is_rejected_naming_the_fault_and_the_legal_actions(
    served: Served, tmp_path: Path
) -> None:
    key = served.author("alice")
    states = served.submit(key, bot_dir(tmp_path, "bad", ILLEGAL), "illegal")
    detail = str(states[-1]["detail"])
    assert states[-1]["state"] == "rejected"
    assert "fault in match 1, decision" in detail and "play:ZZ" in detail
    assert "legal: play:" in detail and "referee played: play:" in detail


def test_an_author_sees_and_touches_only_their_own_bots(served: Served, tmp_path: Path) -> None:
    alice, bob = served.author("alice"), served.author("bob")
    states = served.submit(alice, bot_dir(tmp_path, "a", ILLEGAL), "alpha")
    submission = int(str(states[0]["id"]))
    channel, submissions = stub(served.address)
    with channel:
        with pytest.raises(grpc.RpcError) as err:
            list(submissions.Watch(pb.WatchRequest(submission_id=submission), metadata=auth(bob)))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        mine = submissions.ListMine(pb.ListMineRequest(), metadata=auth(bob))
        assert list(mine.bots) == [] and list(mine.submissions) == []
        theirs = submissions.ListMine(pb.ListMineRequest(), metadata=auth(alice))
        assert [s.id for s in theirs.submissions] == [submission]
    rules = (EXAMPLES / "knaves_bot.py").read_text()
    accepted = served.submit(alice, bot_dir(tmp_path, "ok", rules), "keeper")
    assert accepted[-1]["state"] == "accepted"
    retire = served.kit("retire", "keeper", "--key-file", str(bob))
    assert retire.returncode == 2 and "none of your bots" in retire.stderr
    taken = served.kit("submit", str(tmp_path / "a"), "--key-file", str(bob), "--name", "keeper",
                       "--game", "knaves", "--command", "python3 bot.py")  # fmt: skip
    assert taken.returncode == 2 and "taken by another author's bot" in taken.stderr
    with Store(served.url) as store:
        assert store.get_bot("keeper").version == 1  # neither replaced nor retired


def test_a_wrong_or_disabled_key_is_refused_and_the_database_is_untouched(
    served: Served, tmp_path: Path
) -> None:
    key = served.author("carol")
    wrong = tmp_path / "wrong.key"
    wrong.write_text("0" * 64)
    source = bot_dir(tmp_path, "src", (EXAMPLES / "knaves_bot.py").read_text())
    before = _database_bytes(served)
    done = served.kit("submit", str(source), "--key-file", str(wrong), "--name", "x", "--game",
                      "knaves", "--command", "python3 bot.py")  # fmt: skip
    assert done.returncode == 2 and "wrong or disabled author key" in done.stderr
    assert _database_bytes(served) == before
    with Store(served.url) as store:
        store.disable_author("carol")
    done = served.kit("mine", "--key-file", str(key))
    assert done.returncode == 2 and "UNAUTHENTICATED" in done.stderr


def _database_bytes(served: Served) -> dict[str, bytes]:
    # The -shm file is SQLite's shared index of the WAL, which readers update: not data.
    files = [served.db, served.db.with_name("cs.db-wal")]
    return {p.name: p.read_bytes() for p in files if p.is_file()}


def _raw_submit(served: Served, key: Path, data: list[bytes]) -> grpc.RpcError:
    header = pb.SubmitHeader(name="raw", games=["knaves"], command="python3 bot.py")
    stream = [pb.SubmitChunk(header=header), *(pb.SubmitChunk(data=d) for d in data)]
    channel, submissions = stub(served.address)
    with channel, pytest.raises(grpc.RpcError) as err:
        submissions.Submit(iter(stream), metadata=auth(key))
    return err.value


def test_oversized_and_hostile_archives_are_refused_and_nothing_is_stored(
    served: Served, tmp_path: Path
) -> None:
    key = served.author("dave")
    bomb = gzip.compress(b"\0" * (65 << 20), compresslevel=9)  # 65 MiB of tar, 65 KiB sent
    err = _raw_submit(served, key, [bomb[i : i + 4096] for i in range(0, len(bomb), 4096)])
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "cap of 64 MiB" in (
        err.details() or ""
    )
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escape.py")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"x\n"))
    err = _raw_submit(served, key, [out.getvalue()])
    assert "'../escape.py' leaves the directory" in (err.details() or "")
    err = _raw_submit(served, key, [b"not a gzip at all"])
    assert "not gzip" in (err.details() or "")
    with Store(served.url) as store:
        assert store.bot_archive(pack_directory(tmp_path).digest) is None
    with sqlite3.connect(served.db) as db:
        assert db.execute("SELECT count(*) FROM submissions").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM bot_archives").fetchone() == (0,)


@pytest.mark.parametrize("killed_in", ["building", "testing"])
def test_a_server_killed_mid_verdict_finishes_the_submission_after_restart(
    served: Served, tmp_path: Path, killed_in: str
) -> None:
    key = served.author("erin")
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.cpp").write_text(FIRST_LEGAL_CPP)
    archive = pack_directory(source).data
    header = pb.SubmitHeader(
        name="phoenix", games=["knaves"], command=BRIDGED, build="g++ -O2 -o bot bot.cpp"
    )
    channel, submissions = stub(served.address)
    with channel:
        sent = submissions.Submit(
            iter([pb.SubmitChunk(header=header), pb.SubmitChunk(data=archive)]),
            metadata=auth(key),
        )
        for state in submissions.Watch(pb.WatchRequest(submission_id=sent.id), metadata=auth(key)):
            if state.state == killed_in:
                break
    served.stop(signal.SIGKILL)
    with Store(served.url) as store:
        assert store.submission(sent.id).state == killed_in
        assert store.list_bots() == []  # nothing half stored
    served.proc, served.address = start_serve(tmp_path, *served.args)
    channel, submissions = stub(served.address)
    with channel:
        states = list(submissions.Watch(pb.WatchRequest(submission_id=sent.id), metadata=auth(key)))
    assert states[-1].state == "accepted"
    with Store(served.url) as store:
        assert [b.name for b in store.list_bots()] == ["phoenix"]
    work = tmp_path / "logs" / "submissions" / "work"
    assert not work.exists() or list(work.iterdir()) == []  # the killed run's leftovers went


def test_the_organizers_limits_refuse_in_one_line_naming_the_limit(tmp_path: Path) -> None:
    served = Served(tmp_path, "--submissions-per-hour", "2", "--bots-per-author", "1")
    try:
        key = served.author("fay")
        rules = bot_dir(tmp_path, "rules", (EXAMPLES / "knaves_bot.py").read_text())
        assert served.submit(key, rules, "keeper")[-1]["state"] == "accepted"
        args = ("--key-file", str(key), "--game", "knaves", "--command", "python3 bot.py")
        more = served.kit("submit", str(rules), "--name", "another", *args)
        assert more.returncode == 2 and more.stderr.count("\n") == 1
        assert "you have 1 bots in play: this server allows 1 an author" in more.stderr
        # A new version of a bot in play is no new bot: it passes that limit.
        states = served.submit(key, bot_dir(tmp_path, "bad", ILLEGAL), "keeper")
        assert states[-1]["state"] == "rejected"
        third = served.kit("submit", str(rules), "--name", "keeper", *args)
        assert third.returncode == 2 and "RESOURCE_EXHAUSTED" in third.stderr
        assert "you sent 2 submissions in the last hour: this server takes 2" in third.stderr
        with Store(served.url) as store:
            fay = store.get_author("fay").id or 0
            assert len(store.authors_bots(fay).submissions) == 2  # refusals store nothing
    finally:
        served.stop()


def test_a_cpp_bot_is_built_in_the_sandbox_and_a_failed_build_is_rejected_with_its_error(
    served: Served, tmp_path: Path
) -> None:
    key = served.author("gil")
    source = tmp_path / "cpp"
    source.mkdir()
    (source / "bot.cpp").write_text(FIRST_LEGAL_CPP)
    build = "g++ -O1 -o bot bot.cpp"
    args = ("--key-file", str(key), "--game", "knaves", "--json")
    done = served.kit("submit", str(source), "--name", "cpp", "--command", BRIDGED,
                      "--build", build, *args)  # fmt: skip
    states = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, states or done.stderr
    assert [s["state"] for s in states][-3:] == ["building", "testing", "accepted"]
    assert "built in" in str(states[-1]["detail"]) and "PASS" in str(states[-1]["detail"])
    with Store(served.url) as store:
        bot = store.get_bot("cpp")
        assert bot.code_digest != states[-1]["digest"]  # the built tree plays, not the source
        built = store.bot_archive(bot.code_digest or "")
    assert built is not None
    with tarfile.open(fileobj=io.BytesIO(built), mode="r:gz") as tar:
        assert sorted(tar.getnames()) == ["bot", "bot.cpp"]

    (source / "bot.cpp").write_text("int main() { return undeclared; }\n")
    done = served.kit("submit", str(source), "--name", "cpp2", "--command", BRIDGED,
                      "--build", build, *args)  # fmt: skip
    last = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 1 and last["state"] == "rejected"
    assert "build failed: exited with status 1" in last["detail"]
    assert "bot.cpp:1:21: error:" in last["detail"]
    # gcc quotes with ‘’ or '' as the locale says
    assert re.search(r".undeclared. was not declared in this scope", last["detail"])
    dial = "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=2)'"
    done = served.kit("submit", str(source), "--name", "dialer", "--command", BRIDGED,
                      "--build", dial, *args)  # fmt: skip
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["state"] == "rejected" and "Network is unreachable" in last["detail"]


def test_an_author_reads_their_bots_faults_and_stderr_in_a_match_and_no_one_elses(
    served: Served, tmp_path: Path
) -> None:
    alice, bob = served.author("alice"), served.author("bob")
    assert served.submit(alice, bot_dir(tmp_path, "tf", TWO_FACED), "sly")[-1]["state"] == (
        "accepted"
    )
    play_knaves(served, "sly")
    with Store(served.url) as store:
        match_id = store.matches(1)[0].id
    shown = served.kit("log", str(match_id), "--bot", "sly", "--key-file", str(alice), "--json")
    assert shown.returncode == 0, shown.stderr
    log = json.loads(shown.stdout)
    assert log["bot"] == "sly" and len(log["seats"]) == 1 and len(log["scores"]) == 3
    assert log["faults"] and "unknown_action: action 'play:ZZ'" in log["faults"][0]
    assert "legal: play:" in log["faults"][0]
    assert f"cheating in {match_id}" in log["stderr"]
    for who, bot in ((bob, "sly"), (bob, "r1"), (alice, "r1")):
        refused = served.kit("log", str(match_id), "--bot", bot, "--key-file", str(who))
        assert refused.returncode == 2 and "cheating" not in refused.stdout + refused.stderr


def test_a_build_past_the_organizers_time_is_killed_and_rejected_saying_so(
    tmp_path: Path,
) -> None:
    served = Served(tmp_path, "--build-seconds", "2", "--build-mb", "1")
    try:
        key = served.author("hal")
        source = bot_dir(tmp_path, "slow", ILLEGAL)
        args = ("--key-file", str(key), "--game", "knaves", "--command", BRIDGED, "--json")
        done = served.kit("submit", str(source), "--name", "slow", "--build", "sleep 30", *args)
        last = json.loads(done.stdout.splitlines()[-1])
        assert done.returncode == 1 and last["detail"].startswith(
            "build failed: timed out after 2 s"
        )
        big = "head -c 2000000 /dev/zero > blob"
        done = served.kit("submit", str(source), "--name", "big", "--build", big, *args)
        last = json.loads(done.stdout.splitlines()[-1])
        assert last["detail"].startswith("build failed: wrote more than 1 MiB"), last
    finally:
        served.stop()
