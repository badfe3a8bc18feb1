"""A bot's directory packed for the database and unpacked on a worker: the same tree gives the
same digest; what is not plain code inside the tree is refused when packed; a stored archive
that is hostile or damaged is refused before anything is written outside the cache."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from server.bots.archive import ArchiveError, ArchiveTooLargeError, PackedDirectory, pack_directory
from server.bots.code import USES, CodeCache, place_code, tree_bytes
from server.bots.process import ManagedBot
from server.bots.start import BotToStart
from tests.server.code_cache import entries


def tree(root: Path, files: dict[str, str]) -> Path:
    """A directory holding files (path: text); 'run.sh' is made executable."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith(".sh"):
            path.chmod(0o755)
    return root


SOURCE = {"bot.py": "print('hi')\n", "lib/util.py": "X = 1\n", "run.sh": "#!/bin/sh\n"}


def test_the_same_tree_gives_the_same_digest_and_a_changed_byte_another(tmp_path: Path) -> None:
    one = pack_directory(tree(tmp_path / "one", SOURCE))
    # Made in another order, other times and modes, with bytecode and git files beside.
    other = tmp_path / "other"
    tree(other, dict(reversed(SOURCE.items())))
    os.utime(other / "bot.py", (1, 1))
    (other / "lib" / "util.py").chmod(0o600)
    tree(other, {"__pycache__/bot.cpython-311.pyc": "junk", ".git/HEAD": "ref"})
    assert pack_directory(other).digest == one.digest
    assert one.files == 3
    assert hashlib.sha256(gzip.decompress(one.data)).hexdigest() == one.digest

    (other / "lib" / "util.py").write_text("X = 2\n")
    assert pack_directory(other).digest != one.digest
    (other / "lib" / "util.py").write_text("X = 1\n")
    (other / "run.sh").chmod(0o644)  # the executable bit is part of the code
    assert pack_directory(other).digest != one.digest


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: os.symlink("/etc/passwd", d / "pw"), "pw is a symlink to an absolute path"),
        (lambda d: os.symlink("../../x", d / "up"), "up is a symlink pointing outside"),
        (lambda d: os.mkfifo(d / "pipe"), "pipe is a special file"),
    ],
    ids=["absolute-link", "link-out", "fifo"],
)
def test_packing_refuses_what_is_not_plain_code_naming_it(
    tmp_path: Path, make: Callable[[Path], None], said: str
) -> None:
    root = tree(tmp_path / "bot", SOURCE)
    make(root)
    with pytest.raises(ArchiveError, match=said):
        pack_directory(root)


def test_a_link_inside_the_tree_is_kept(tmp_path: Path) -> None:
    root = tree(tmp_path / "bot", SOURCE)
    os.symlink("lib/util.py", root / "util.py")
    cache = CodeCache(tmp_path / "cache")
    packed = pack_directory(root)
    unpacked = cache.directory(packed.digest, lambda: packed.data)
    assert (unpacked / "util.py").read_text() == "X = 1\n"


def test_the_cap_names_the_size_and_the_cap(tmp_path: Path) -> None:
    root = tree(tmp_path / "bot", SOURCE)
    (root / "blob").write_bytes(os.urandom(3 << 20))
    with pytest.raises(ArchiveTooLargeError) as caught:
        pack_directory(root, cap=1 << 20)
    assert f"the archive of {root} would be 3.0 MiB, more than the cap of 1 MiB" == str(
        caught.value
    )


def test_unpacked_once_read_only_and_rebuilt_when_altered(tmp_path: Path) -> None:
    packed = pack_directory(tree(tmp_path / "bot", SOURCE))
    cache = CodeCache(tmp_path / "cache")
    loads: list[str] = []

    def load() -> bytes:
        loads.append(packed.digest)
        return packed.data

    first = cache.directory(packed.digest, load)
    assert first == tmp_path / "cache" / packed.digest
    assert (first / "lib" / "util.py").read_text() == "X = 1\n"
    assert os.access(first / "run.sh", os.X_OK)
    assert {oct(p.stat().st_mode & 0o777) for p in first.rglob("*")} <= {"0o444", "0o555"}
    assert cache.directory(packed.digest, load) == first
    assert loads == [packed.digest]  # once per digest
    assert entries(cache.root) == [packed.digest]

    (first / "lib").chmod(0o755)
    (first / "lib" / "util.py").chmod(0o644)
    (first / "lib" / "util.py").write_text("X = 'tampered'\n")
    again = cache.directory(packed.digest, load)
    assert (again / "lib" / "util.py").read_text() == "X = 1\n"
    assert loads == [packed.digest] * 2
    assert entries(cache.root) == [packed.digest]


def test_workers_racing_on_one_digest_share_one_intact_tree(tmp_path: Path) -> None:
    packed = pack_directory(tree(tmp_path / "bot", SOURCE))
    cache = CodeCache(tmp_path / "cache")
    start = threading.Barrier(8)
    found: list[Path | BaseException] = []

    def unpack() -> None:
        start.wait()
        try:
            found.append(cache.directory(packed.digest, lambda: packed.data))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            found.append(exc)

    threads = [threading.Thread(target=unpack) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [cache.root / packed.digest] * 8
    assert entries(cache.root) == [packed.digest]  # no temp left
    assert cache.intact(cache.root / packed.digest, packed.digest)


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    """A tar built member by member, as an attacker would: no checks."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        return info, data
    return info, None


OK = member("bot.py", data=b"print('hi')\n")
HOSTILE = {
    "dotdot": ([OK, member("../../escaped.txt", data=b"x")], "'../../escaped.txt' leaves"),
    "absolute": ([OK, member("/tmp/cardshark-escaped.txt", data=b"x")], "has an absolute path"),
    "link-out": (
        [OK, member("out", tarfile.SYMTYPE, link="../../.."), member("out/escaped.txt", data=b"x")],
        "member 'out' links outside",
    ),
    "absolute-link": ([OK, member("etc", tarfile.SYMTYPE, link="/etc")], "'etc' links outside"),
    "write-through-link": (
        [OK, member("d", tarfile.SYMTYPE, link="."), member("d/escaped.txt", data=b"x")],
        "'d/escaped.txt' lies under a symlink",
    ),
    "link-chain": (
        # Each link stays inside on its own; together 'x' is the cache's parent.
        [OK, member("x", tarfile.SYMTYPE, link="sub/up/.."), member("sub", tarfile.DIRTYPE)]
        + [member("sub/up", tarfile.SYMTYPE, link="..")],
        "'x' links outside",
    ),
    "hard-link": ([OK, member("pw", tarfile.LNKTYPE, link="/etc/passwd")], "'pw' is not a file"),
    "device": ([OK, member("null", tarfile.CHRTYPE)], "'null' is not a file"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_and_nothing_lands_outside_the_cache(
    tmp_path: Path, kind: str
) -> None:
    members, said = HOSTILE[kind]
    tar = tar_of(*members)
    digest = hashlib.sha256(tar).hexdigest()
    cache = CodeCache(tmp_path / "a" / "b" / "cache")
    before = set(tmp_path.rglob("*"))
    with pytest.raises(ArchiveError, match=said):
        cache.directory(digest, lambda: gzip.compress(tar))
    made = set(tmp_path.rglob("*")) - before
    inside = {cache.root, *cache.root.parents, cache.root / USES}
    assert made == inside & made  # the cache, and nothing else
    assert entries(cache.root) == []  # no tree, no temporary left
    assert list((cache.root / USES).iterdir()) == []  # no use recorded
    assert list(tmp_path.rglob("escaped.txt")) == []
    assert not Path("/tmp/cardshark-escaped.txt").exists()


def test_an_archive_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    packed = pack_directory(tree(tmp_path / "bot", SOURCE))
    altered = tar_of(member("bot.py", data=b"import os; os.system('evil')\n"))
    cache = CodeCache(tmp_path / "cache")
    with pytest.raises(ArchiveError, match="does not match its digest"):
        cache.directory(packed.digest, lambda: gzip.compress(altered))
    with pytest.raises(ArchiveError, match="is not a SHA-256 digest"):
        cache.directory("../../etc", lambda: packed.data)
    bomb = gzip.compress(b"\0" * (2 << 20))
    with pytest.raises(ArchiveTooLargeError, match="cap of 1 MiB"):
        CodeCache(tmp_path / "cache", cap=1 << 20).directory("0" * 64, lambda: bomb)
    assert not cache.root.exists()  # refused before anything was written


def blob_bot(root: Path, size: int) -> PackedDirectory:
    """A bot directory of about size bytes (random: every one a different digest), packed."""
    tree(root, SOURCE)
    (root / "model.bin").write_bytes(os.urandom(size))
    return pack_directory(root)


def two_of_three_used(
    tmp_path: Path,
) -> tuple[PackedDirectory, PackedDirectory, PackedDirectory, CodeCache]:
    """Bots a, b and c of 100 kB each, and a cache of 250 kB with a and b unpacked in it."""
    a, b, c = (blob_bot(tmp_path / name, 100_000) for name in "abc")
    cache = CodeCache(tmp_path / "cache", budget=250_000)
    for packed in (a, b):
        cache.directory(packed.digest, lambda packed=packed: packed.data)
    return a, b, c, cache


def test_the_cache_keeps_to_its_budget_dropping_the_trees_used_longest_ago(
    tmp_path: Path,
) -> None:
    a, b, c, cache = two_of_three_used(tmp_path)
    assert (cache.root / USES / a.digest).read_text() == str(tree_bytes(cache.root / a.digest))
    long_ago = time.time() - 1000
    os.utime(cache.root / USES / a.digest, (long_ago, long_ago))  # a used before b
    os.utime(cache.root / USES / b.digest, (long_ago + 10, long_ago + 10))
    cache.directory(a.digest, lambda: a.data)  # and now a again: b is the oldest use
    cache.directory(c.digest, lambda: c.data)  # 300 kB: over the budget, b goes
    assert entries(cache.root) == sorted([a.digest, c.digest])
    loads: list[str] = []
    again = cache.directory(b.digest, lambda: loads.append(b.digest) or b.data)
    assert (again / "model.bin").read_bytes() == (tmp_path / "b" / "model.bin").read_bytes()
    assert loads == [b.digest]  # unpacked anew from the store; a went this time
    assert entries(cache.root) == sorted([b.digest, c.digest])


def test_a_tree_in_use_by_another_process_is_never_evicted(tmp_path: Path) -> None:
    a, b = (blob_bot(tmp_path / name, 100_000) for name in "ab")
    cache = CodeCache(tmp_path / "cache", budget=150_000)
    cache.directory(a.digest, lambda: a.data)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(cache.root / USES / a.digest)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        cache.directory(b.digest, lambda: b.data)  # over the budget, but a is in use
        assert entries(cache.root) == sorted([a.digest, b.digest])
    finally:
        holder.communicate("")
    assert cache.prune() == [a.digest]  # free now, and the least recently used
    assert entries(cache.root) == [b.digest]


HOLDER = (
    "import fcntl, sys; f = open(sys.argv[1], 'ab'); fcntl.flock(f, fcntl.LOCK_SH); "
    "print('held', flush=True); sys.stdin.read()"
)


def test_a_running_bot_holds_its_tree_until_it_is_stopped(tmp_path: Path) -> None:
    packed = blob_bot(tmp_path / "bot", 100_000)
    cache = CodeCache(tmp_path / "cache", budget=0)  # everything not in use goes

    async def run() -> tuple[list[str], list[str]]:
        wanted = [BotToStart("b", "1", "sleep 60", digest=packed.digest)]
        placed, refused = await place_code(wanted, cache, lambda _: packed.data)
        assert refused == [] and placed[0].workdir == cache.root / packed.digest
        bot = ManagedBot(
            "b", "sleep 60", tmp_path / "b.log", workdir=placed[0].workdir, hold=placed[0].hold
        )
        del placed  # the bot holds the tree now, nothing else does
        await bot.start("127.0.0.1:1", "t")
        while_running = cache.prune()
        await bot.stop(timeout=1.0)
        return while_running, cache.prune()

    while_running, stopped = asyncio.run(run())
    assert while_running == []
    assert stopped == [packed.digest]
    assert entries(cache.root) == []


def test_a_use_record_without_a_size_still_dates_the_tree_and_its_files_are_counted(
    tmp_path: Path,
) -> None:
    a, b, c, cache = two_of_three_used(tmp_path)
    now = time.time()
    os.utime(cache.root / USES / a.digest, (now - 500, now - 500))
    (cache.root / USES / b.digest).write_text("")  # no size: its files are counted
    os.utime(cache.root / USES / b.digest, (now + 1000, now + 1000))  # b used last
    os.utime(cache.root / b.digest, (now - 1000, now - 1000))  # though unpacked first
    cache.directory(c.digest, lambda: c.data)
    assert entries(cache.root) == sorted([b.digest, c.digest])
