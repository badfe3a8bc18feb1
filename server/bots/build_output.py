"""What a build sends back: its output's tail, the wrapper's report and the built tree's tar,
unpacked with every check a stored archive gets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from server.bots.archive import ArchiveError, check_links, check_members

PAGE = 4096
CHUNK = 1 << 16


def tree_pages(tree: Path) -> int:
    """Bytes the files of a tree take on a tmpfs (whole pages), links not followed."""
    total = 0
    for here, _, files in os.walk(tree):
        for name in files:
            with contextlib.suppress(OSError):
                size = os.lstat(os.path.join(here, name)).st_size
                total += -(-size // PAGE) * PAGE
    return total


class Tail:
    """The last `cap` bytes of a stream, and how many came before them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        """Keep data, dropping what falls before the last cap bytes."""
        self.total += len(data)
        self.kept += data
        if len(self.kept) > self.cap:
            del self.kept[: len(self.kept) - self.cap]

    def text(self) -> str:
        """The kept bytes as text, saying how much was cut before them."""
        body = self.kept.decode("utf-8", "replace")
        cut = self.total - len(self.kept)
        if cut:
            body = f"[cardshark: {cut} bytes of output cut before this]\n" + body
        return body


@dataclass
class Outcome:
    """What the sandbox reported on its result pipe."""

    copied: bool = True  # the source was copied in
    status: int | None = None  # the build command's exit status, as its shell reports it
    full: bool = False  # a tmpfs of the build was (nearly) full when it ended
    tar: IO[bytes] | None = None  # where the tar of the built tree was spooled
    tar_bytes: int = 0
    over: bool = False  # the tar went past its cap
    timed_out: bool = False
    ooms: int = 0  # processes the OOM killer ended in the build's memory cgroup
    refused: int = 0  # forks its pids cgroup refused
    returncode: int | None = None  # the sandbox's


async def read_log(stream: asyncio.StreamReader, tail: Tail) -> None:
    """Read a build's output into tail until it ends."""
    while chunk := await stream.read(CHUNK):
        tail.add(chunk)


async def read_result(
    stream: asyncio.StreamReader,
    out: Outcome,
    spool: IO[bytes],
    cap: int,
    stop: Callable[[], None],
) -> None:
    """Parse the wrapper's lines, then spool the tar; past cap bytes, stop the build."""
    while line := await stream.readline():
        words = line.decode("ascii", "replace").split()
        if words == ["copy", "failed"]:
            out.copied = False
        elif words[:1] == ["status"] and len(words) == 2 and words[1].isdigit():
            out.status = int(words[1])
        elif words[:1] == ["free"] and len(words) == 4 and all(w.isdigit() for w in words[1:]):
            free, total, block = (int(w) for w in words[1:])
            # Full: less than 1 MiB left, or a 16th of a small tmpfs.
            out.full = out.full or free * block < min(1 << 20, total * block // 16)
        elif words == ["tar"]:
            break
    else:
        return
    out.tar = spool
    while chunk := await stream.read(CHUNK):
        out.tar_bytes += len(chunk)
        if out.tar_bytes > cap:
            out.over = True
            stop()
            return
        out.tar.write(chunk)


def unpack_built(spooled: IO[bytes], into: Path, cap: int, too_big: str) -> None:
    """Unpack the build's tar, checked as a stored archive is; ArchiveError if refused (with
    too_big if its files come to more than cap bytes: sparse files, say)."""
    spooled.seek(0)
    what = "the built tree"
    try:
        with tarfile.open(fileobj=spooled, mode="r:") as archive:
            members = []
            for member in archive.getmembers():
                name = posixpath.normpath(member.name)
                if name == ".":
                    continue
                member.name = name
                members.append(member)
            check_members(members, "", label=what)
            if sum(m.size for m in members if m.isreg()) > cap:
                raise ArchiveError(too_big)
            archive.errorlevel = 2
            archive.extractall(into, members=members, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"{what} cannot be unpacked: {exc}") from exc
    check_links(into, "", label=what)
