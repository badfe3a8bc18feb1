"""A bot's directory packed for the database and unpacked on a worker: the same tree gives the
same digest; what is not plain code inside the tree is refused when packed; a stored archive
that is hostile or damaged is refused before anything is written outside the cache."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from server.bot_archive import ArchiveError, ArchiveTooLargeError, pack_directory
from server.bot_code import CodeCache


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
    assert sorted(p.name for p in cache.root.iterdir()) == [packed.digest]

    (first / "lib").chmod(0o755)
    (first / "lib" / "util.py").chmod(0o644)
    (first / "lib" / "util.py").write_text("X = 'tampered'\n")
    again = cache.directory(packed.digest, load)
    assert (again / "lib" / "util.py").read_text() == "X = 1\n"
    assert loads == [packed.digest] * 2
    assert sorted(p.name for p in cache.root.iterdir()) == [packed.digest]


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
    assert sorted(p.name for p in cache.root.iterdir()) == [packed.digest]  # no temp left
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
    assert made == {cache.root, *cache.root.parents} & made  # the cache, and nothing else
    assert list(cache.root.iterdir()) == []  # no tree, no temporary left
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
