"""Submissions against a real `cardshark serve`: the time from the end of an upload to the
verdict, and what builds cost the tournaments played beside them.

Usage: python bench/submissions.py [--rounds R] [--builds B] [--json]

It starts `cardshark serve` on a free port with a fresh SQLite file (the sandbox on, as an
organizer runs it) and measures:

  verdict: an author's Python bot (the Knaves rule bot, no build) and a C++ bot (built with
           g++ in the sandbox, played through the stdio bridge), each submitted with the
           kit's Submit; the seconds from the upload's end to the verdict (Watch).
  play:    a Knaves tournament of three managed bots run through the Admin service, alone
           and then while B C++ submissions are built and tested beside it: decisions per
           second, voided matches and timeouts (the builds must not starve play).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "clients/python")]

import grpc  # noqa: E402

from cardshark.v1 import (  # noqa: E402
    admin_pb2,
    admin_pb2_grpc,
    submissions_pb2_grpc,  # noqa: E402
)
from cardshark.v1 import submissions_pb2 as pb  # noqa: E402
from server.bots.archive import pack_directory  # noqa: E402
from tournaments.store import Store  # noqa: E402

EXAMPLES = ROOT / "clients" / "python" / "examples"
ADMIN = "bench-admin-token"
CPP = (ROOT / "tests" / "server" / "bots" / "first_legal.cpp").read_text()
BRIDGED = "python3 -m cardshark_bot.bridge -- ./bot"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """`cardshark serve` in a temporary directory, with an author and the admin token."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.url = f"sqlite:///{work / 'bench.db'}"
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--port", str(port), "--web-port", "0",
             "--log-dir", str(work / "logs"), "--db", self.url,
             "--submissions-per-hour", "0", "--bots-per-author", "0"],
            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env=os.environ | {"CARDSHARK_ADMIN_TOKEN": ADMIN},
        )  # fmt: skip
        self.channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=60)
        with Store(self.url) as store:
            _, key = store.add_author("bencher")
        self.author = (("authorization", f"Bearer {key}"),)
        self.admin = (("authorization", f"Bearer {ADMIN}"),)
        self.submissions = submissions_pb2_grpc.SubmissionsStub(self.channel)
        self.admin_stub = admin_pb2_grpc.AdminStub(self.channel)

    def submit(self, name: str, directory: Path, command: str, build: str = "") -> int:
        """Upload; returns the submission's id once the upload has ended."""
        header = pb.SubmitHeader(name=name, games=["knaves"], command=command, build=build)
        data = pack_directory(directory).data
        chunks = [pb.SubmitChunk(header=header), pb.SubmitChunk(data=data)]
        return int(self.submissions.Submit(iter(chunks), metadata=self.author).id)

    def verdict(self, submission: int) -> pb.Submission:
        """The submission's last state, waited for."""
        request = pb.WatchRequest(submission_id=submission)
        return list(self.submissions.Watch(request, metadata=self.author))[-1]

    def stop(self) -> None:
        self.channel.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)


def source(work: Path, name: str, files: dict[str, str]) -> Path:
    directory = work / name
    directory.mkdir()
    for file, text in files.items():
        (directory / file).write_text(text)
    return directory


def time_verdicts(server: Server, work: Path) -> dict[str, Any]:
    """Seconds from the end of each upload to its verdict."""
    out: dict[str, Any] = {}
    python = source(work, "py", {"bot.py": (EXAMPLES / "knaves_bot.py").read_text()})
    cpp = source(work, "cpp", {"bot.cpp": CPP})
    for label, directory, command, build in (
        ("python", python, "python3 bot.py", ""),
        ("cpp", cpp, BRIDGED, "g++ -O2 -o bot bot.cpp"),
    ):
        submitted = server.submit(f"v-{label}", directory, command, build)
        start = time.perf_counter()
        last = server.verdict(submitted)
        out[label] = {"seconds": round(time.perf_counter() - start, 2), "state": last.state}
    return out


def play(server: Server, rounds: int, tag: str) -> dict[str, Any]:
    """A Knaves round robin of three managed bots through the Admin service."""
    names = []
    for i, script in enumerate(("knaves_bot.py", "random_bot.py", "random_bot.py")):
        name = f"{tag}{i}"
        server.admin_stub.AddBot(
            admin_pb2.AddBotRequest(name=name, command=f"python3 {EXAMPLES / script}"),
            metadata=server.admin,
        )
        names.append(name)
    created = server.admin_stub.CreateTournament(
        admin_pb2.CreateTournamentRequest(game="knaves", bots=names, rounds=rounds, seed=7),
        metadata=server.admin,
    ).tournament
    start = time.perf_counter()
    request = admin_pb2.RunTournamentRequest(tournament_id=created.tournament_id, concurrency=2)
    list(server.admin_stub.RunTournament(request, metadata=server.admin))
    seconds = time.perf_counter() - start
    with Store(server.url) as store:
        matches = store.matches(created.tournament_id)
    decisions = sum(len((m.record or {}).get("actions", [])) for m in matches)
    timeouts = sum(
        1 for m in matches for f in (m.record or {}).get("faults", []) if f["kind"] == "timeout"
    )
    return {
        "matches": len(matches),
        "decisions_per_s": round(decisions / seconds),
        "voided": sum(m.status == "voided" for m in matches),
        "timeouts": timeouts,
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--builds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-submissions-"))
    server = Server(work)
    try:
        verdicts = time_verdicts(server, work)
        alone = play(server, args.rounds, "a")
        cpp = source(work, "cpp-load", {"bot.cpp": CPP})
        queued = [
            server.submit(f"load{i}", cpp, BRIDGED, f"g++ -O2 -DVARIANT={i} -o bot bot.cpp")
            for i in range(args.builds)
        ]
        beside = play(server, args.rounds, "b")
        states = [server.verdict(s).state for s in queued]
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "verdict_seconds": verdicts,
        "play_alone": alone,
        "play_beside_builds": beside,
        "builds": {"count": args.builds, "states": states},
        "ratio": round(beside["decisions_per_s"] / alone["decisions_per_s"], 2),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for label, got in verdicts.items():
        print(f"verdict {label:<7} {got['seconds']:>6.2f} s after the upload ({got['state']})")
    for label, got in (("alone", alone), (f"beside {args.builds} builds", beside)):
        print(
            f"play {label:<17} {got['decisions_per_s']:>6} decisions/s, {got['matches']} "
            f"matches, {got['voided']} voided, {got['timeouts']} timeouts"
        )
    print(f"decisions/s beside the builds / alone: {result['ratio']:.2f}")
    print(f"builds: {', '.join(states)}")


if __name__ == "__main__":
    main()
