"""`cardshark-bot`: an author's command line: submit a bot's directory, list your bots and
submissions, retire a bot. It speaks the Submissions service (proto/cardshark/v1/
submissions.proto) with the author key from `cardshark author add`.

    cardshark-bot submit DIR --server HOST:PORT --key-file F --name N --game G --command CMD
                         [--build CMD]
    cardshark-bot mine --server HOST:PORT --key-file F
    cardshark-bot retire NAME --server HOST:PORT --key-file F
    cardshark-bot log MATCH --bot NAME --server HOST:PORT --key-file F

`submit` prints each state of the submission as it changes and ends with the verdict: exit 0
accepted, 1 rejected, 2 for bad usage or a refusal before the test (a bad key, archive or
name), 3 when the server cannot be reached. `--json` prints one JSON object per state.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc

from cardshark.v1 import submissions_pb2 as pb
from cardshark.v1 import submissions_pb2_grpc
from cardshark_bot.client import DEFAULT_SERVER, channel_credentials

CHUNK = 1 << 20
SKIPPED = frozenset({".git", "__pycache__"})
DONE = ("accepted", "rejected")
EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


class UsageError(Exception):
    """Bad input on the command line: the message is one line for the author."""


def pack(directory: Path) -> bytes:
    """The directory as a gzipped tar the server takes: sorted, zero times and owners, links
    kept as links (the server refuses one that leaves the directory), .git left out."""
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT, compresslevel=6) as tar:
        for path in _walk(directory):
            info = tar.gettarinfo(str(path), path.relative_to(directory).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isreg():
                info.mode = 0o755 if info.mode & stat.S_IXUSR else 0o644
                with path.open("rb") as f:
                    tar.addfile(info, f)
            elif info.isdir() or info.issym():
                info.mode = 0o755 if info.isdir() else info.mode
                tar.addfile(info)
            else:
                raise UsageError(f"{path} is not a file, directory or symlink")
    return out.getvalue()


def _walk(root: Path) -> Iterator[Path]:
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        base = Path(here)
        for name in sorted([*dirs, *files]):
            yield base / name


def chunks(header: pb.SubmitHeader, archive: bytes) -> Iterator[pb.SubmitChunk]:
    """The Submit stream: the header, then the archive in chunks."""
    yield pb.SubmitChunk(header=header)
    for start in range(0, len(archive), CHUNK):
        yield pb.SubmitChunk(data=archive[start : start + CHUNK])


def state_json(s: pb.Submission) -> dict[str, Any]:
    """A submission's state as the JSON line --json prints."""
    return {
        "id": s.id,
        "name": s.name,
        "version": s.version,
        "state": s.state,
        "detail": s.detail,
        "digest": s.digest,
        "games": list(s.games),
        "updated": s.updated,
    }


def state_lines(s: pb.Submission) -> list[str]:
    """A submission's state as text: one line, then the detail indented."""
    version = f" (version {s.version})" if s.version else ""
    lines = [f"submission {s.id}, {s.name}{version}: {s.state}"]
    lines += [f"  {line}" for line in s.detail.splitlines()]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        key = _read_key(args.key_file)
        credentials = channel_credentials(args.tls_ca)
        channel = (
            grpc.insecure_channel(args.server)
            if credentials is None
            else grpc.secure_channel(args.server, credentials)
        )
        with channel:
            stub = submissions_pb2_grpc.SubmissionsStub(channel)  # type: ignore[no-untyped-call]
            metadata = (("authorization", f"Bearer {key}"),)
            return int(args.run(stub, metadata, args))
    except UsageError as exc:
        print(f"cardshark-bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except grpc.RpcError as exc:
        code, details = exc.code(), exc.details()
        print(f"cardshark-bot: {details} ({code.name})", file=sys.stderr)
        return EXIT_UNREACHABLE if code == grpc.StatusCode.UNAVAILABLE else EXIT_USAGE


def _submit(stub: Any, metadata: Any, args: argparse.Namespace) -> int:
    header = pb.SubmitHeader(
        name=args.name, games=args.game, command=args.command, build=args.build or ""
    )
    submission = stub.Submit(chunks(header, pack(Path(args.directory))), metadata=metadata)
    last = submission
    for state in stub.Watch(pb.WatchRequest(submission_id=submission.id), metadata=metadata):
        _show(state, args.json)
        last = state
    return EXIT_ACCEPTED if last.state == "accepted" else EXIT_REJECTED


def _mine(stub: Any, metadata: Any, args: argparse.Namespace) -> int:
    mine = stub.ListMine(pb.ListMineRequest(), metadata=metadata)
    if args.json:
        bots = [
            {"name": b.name, "version": b.version, "retired": b.retired, "created": b.created}
            for b in mine.bots
        ]
        subs = [state_json(s) for s in mine.submissions]
        print(json.dumps({"bots": bots, "submissions": subs}, indent=2))
        return 0
    print("bots:" if mine.bots else "bots: none")
    for b in mine.bots:
        print(f"  {b.name:<32} v{b.version:<4} {'retired' if b.retired else 'playing'}")
    print("submissions:" if mine.submissions else "submissions: none")
    for s in mine.submissions:
        first = s.detail.splitlines()[0] if s.detail else ""
        print(f"  {s.id:>5} {s.name:<24} {s.state:<9} {first[:40]}")
    return 0


def _retire(stub: Any, metadata: Any, args: argparse.Namespace) -> int:
    reply = stub.Retire(pb.RetireRequest(name=args.name), metadata=metadata)
    print(f"{args.name}: {reply.outcome}")
    return 0


def _log(stub: Any, metadata: Any, args: argparse.Namespace) -> int:
    found = stub.MatchLog(pb.MatchLogRequest(match_id=args.match, bot=args.bot), metadata=metadata)
    if args.json:
        shown = {
            "match_id": found.match_id,
            "bot": found.bot,
            "game": found.game,
            "status": found.status,
            "seats": list(found.seats),
            "scores": list(found.scores),
            "faults": list(found.faults),
            "stderr": found.stderr,
        }
        print(json.dumps(shown, indent=2))
        return 0
    seats = ", ".join(map(str, found.seats))
    scores = " / ".join(map(str, found.scores)) or "none yet"
    print(f"match {found.match_id} ({found.game}, {found.status}): {found.bot} in seat {seats}")
    print(f"scores by seat: {scores}")
    print(f"faults: {len(found.faults)}")
    for fault in found.faults:
        print(fault)
    print("stderr:" if found.stderr else "stderr: (none kept for this match's tournament)")
    for line in found.stderr.splitlines():
        print(f"  {line}")
    return 0


def _show(state: pb.Submission, as_json: bool) -> None:
    if as_json:
        print(json.dumps(state_json(state)), flush=True)
    else:
        print("\n".join(state_lines(state)), flush=True)


def _read_key(path: str) -> str:
    try:
        key = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"cannot read the key file {path}: {exc.strerror}") from None
    if not key:
        raise UsageError(f"the key file {path} is empty")
    return key


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardshark-bot", description="Submit your bots to a cardshark server."
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    submit = commands.add_parser("submit", help="send a bot's directory and wait for the verdict")
    submit.add_argument("directory", metavar="DIR", help="the bot's directory")
    submit.add_argument("--name", required=True, help="the bot's name")
    submit.add_argument(
        "--game", required=True, action="append", help="a game it plays (repeat for more)"
    )
    submit.add_argument("--command", required=True, help="how to start it, run in DIR")
    submit.add_argument("--build", help="a build command run once in DIR before the tests")
    submit.set_defaults(run=_submit)
    mine = commands.add_parser("mine", help="list your bots and submissions")
    mine.set_defaults(run=_mine)
    retire = commands.add_parser("retire", help="take one of your bots out of future play")
    retire.add_argument("name", metavar="NAME")
    retire.set_defaults(run=_retire)
    log = commands.add_parser("log", help="your bot's faults and stderr in one match")
    log.add_argument("match", metavar="MATCH", type=int, help="the match's id")
    log.add_argument("--bot", required=True, help="which of your bots")
    log.set_defaults(run=_log)
    for command in (submit, mine, retire, log):
        command.add_argument("--server", default=DEFAULT_SERVER, help="HOST:PORT of the server")
        command.add_argument(
            "--key-file", required=True, help="a file holding your author key (keep it 0600)"
        )
        command.add_argument("--tls-ca", help="the CA to trust for a TLS server (PEM file)")
        command.add_argument("--json", action="store_true", help="print JSON")
    return parser


if __name__ == "__main__":
    sys.exit(main())
