"""A managed bot's directory as a deterministic tar: packed by `bot add --dir`, stored in the
database under the SHA-256 of the tar, and unpacked safely by whoever plays the bot.

The digest is of the uncompressed tar, whose bytes depend only on the tree (sorted entries,
zero mtimes and owners, modes reduced to executable or not): the same tree gives the same
digest on any machine, whatever zlib compresses it. See docs/scaling.md and docs/security.md.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DEFAULT_CAP_BYTES = 64 << 20
SKIPPED = frozenset({".git", "__pycache__"})  # never part of a bot's code
_CHUNK = 1 << 20


class ArchiveError(Exception):
    """A directory cannot be packed, or a stored archive cannot be unpacked: says which path."""


class ArchiveTooLargeError(ArchiveError):
    """The tar is larger than the cap."""

    def __init__(self, what: str, cap: int, size: int | None = None) -> None:
        self.cap = cap
        how = "is larger than" if size is None else f"would be {mib(size)}, more than"
        super().__init__(f"{what} {how} the cap of {mib(cap)}")


def mib(size: int) -> str:
    """A size for messages ("64 MiB", "2.9 MiB", "10.0 KiB")."""
    if size < 1 << 20:
        return f"{size / 1024:.1f} KiB"
    value = size / (1 << 20)
    return f"{value:.0f} MiB" if value >= 10 or value == int(value) else f"{value:.1f} MiB"


@dataclass(frozen=True)
class PackedDirectory:
    """A packed directory: the gzipped tar, its digest and the tar's size."""

    data: bytes
    digest: str
    size: int
    files: int


class _Sink(io.RawIOBase):
    """Where tarfile writes: hashed, counted and gzipped as it comes, refused over the cap."""

    def __init__(self, cap: int, what: str) -> None:
        self.hash = hashlib.sha256()
        self.size = 0
        self.cap = cap
        self.what = what
        self.out = io.BytesIO()
        self.gzip = gzip.GzipFile(fileobj=self.out, mode="wb", compresslevel=6, mtime=0)

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.size += len(data)
        if self.size > self.cap:
            raise ArchiveTooLargeError(self.what, self.cap)
        self.hash.update(data)
        self.gzip.write(data)
        return len(data)


def pack_directory(directory: Path, cap: int = DEFAULT_CAP_BYTES) -> PackedDirectory:
    """Pack a bot's directory; ArchiveError naming the path for anything that is not a regular
    file, a directory or a symlink that stays inside it, and ArchiveTooLargeError over cap."""
    root = Path(directory)
    if not root.is_dir():
        raise ArchiveError(f"{root} is not a directory")
    real_root = Path(os.path.realpath(root))
    sink = _Sink(cap, f"the archive of {root}")
    entries = _walk(root)
    try:
        with tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            files = _add_all(tar, root, entries, real_root)
    except ArchiveTooLargeError as exc:
        size = sum(p.lstat().st_size for p in entries if p.is_file() and not p.is_symlink())
        raise ArchiveTooLargeError(f"the archive of {root}", cap, size) from exc
    sink.gzip.close()
    return PackedDirectory(sink.out.getvalue(), sink.hash.hexdigest(), sink.size, files)


def _add_all(tar: tarfile.TarFile, root: Path, entries: list[Path], real_root: Path) -> int:
    """Add every entry to tar; returns how many regular files there were."""
    files = 0
    for path in entries:
        info = _entry(path, path.relative_to(root).as_posix(), real_root)
        if not info.isreg():
            tar.addfile(info)
            continue
        files += 1
        try:
            with path.open("rb") as data:
                tar.addfile(info, data)
        except OSError as exc:
            raise ArchiveError(f"cannot read {path}: {exc.strerror}") from exc
    return files


def _walk(root: Path) -> list[Path]:
    """Every entry under root in a fixed order (by name, bytewise), symlinks not followed."""
    found: list[Path] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: os.fsencode(e.name))
    except OSError as exc:
        raise ArchiveError(f"cannot list {root}: {exc.strerror}") from exc
    for entry in entries:
        if entry.name in SKIPPED:
            continue
        path = Path(entry.path)
        found.append(path)
        if entry.is_dir(follow_symlinks=False):
            found.extend(_walk(path))
    return found


def _entry(path: Path, name: str, real_root: Path) -> tarfile.TarInfo:
    """The normalised tar header of one entry (no owner, no time, 0755/0644)."""
    mode = path.lstat().st_mode
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if stat.S_ISLNK(mode):
        target = os.readlink(path)
        if os.path.isabs(target):
            raise ArchiveError(f"{path} is a symlink to an absolute path ({target}); refused")
        resolved = Path(os.path.realpath(path))
        if resolved != real_root and real_root not in resolved.parents:
            raise ArchiveError(f"{path} is a symlink pointing outside the directory ({target})")
        info.type = tarfile.SYMTYPE
        info.linkname = target
        info.mode = 0o777
    elif stat.S_ISDIR(mode):
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    elif stat.S_ISREG(mode):
        info.type = tarfile.REGTYPE
        info.size = path.lstat().st_size
        info.mode = 0o755 if mode & stat.S_IXUSR else 0o644
    else:
        kind = "a device" if stat.S_ISBLK(mode) or stat.S_ISCHR(mode) else "a special file"
        raise ArchiveError(f"{path} is {kind} (FIFO, socket or device); refused")
    return info


def read_archive(data: bytes, digest: str, cap: int = DEFAULT_CAP_BYTES) -> bytes:
    """The tar inside a stored archive, checked: at most cap bytes, and its SHA-256 the digest
    it is stored under (ArchiveError otherwise: the row was altered or damaged)."""
    inflate = zlib.decompressobj(wbits=31)
    tar = bytearray()
    try:
        pending = data
        while pending:
            tar += inflate.decompress(pending, cap + 1 - len(tar))
            if len(tar) > cap:
                raise ArchiveTooLargeError(f"the stored archive {digest[:12]}", cap)
            pending = inflate.unconsumed_tail
        if not inflate.eof:
            raise ArchiveError(f"the stored archive {digest[:12]} is truncated")
    except zlib.error as exc:
        raise ArchiveError(f"the stored archive {digest[:12]} is not gzip: {exc}") from exc
    found = hashlib.sha256(tar).hexdigest()
    if found != digest:
        raise ArchiveError(
            f"the stored archive {digest[:12]} does not match its digest (its tar hashes to "
            f"{found[:12]}): refused"
        )
    return bytes(tar)


def check_members(members: list[tarfile.TarInfo], digest: str, *, label: str | None = None) -> None:
    """Refuse, naming the member, anything that could land outside the directory it is
    unpacked into or is not plain code: absolute names, '..', links out, devices, hard links.
    Messages name "the stored archive DIGEST", or label when given ("the built tree")."""
    seen: set[str] = set()
    links: set[str] = set()
    whose = label or f"the stored archive {digest[:12]}"
    for member in members:
        name = PurePosixPath(member.name)
        shown = f"{whose}: member {member.name!r}"
        if name.is_absolute() or member.name.startswith("/"):
            raise ArchiveError(f"{shown} has an absolute path; refused")
        if ".." in name.parts or not name.parts or name.parts[0] == ".":
            raise ArchiveError(f"{shown} leaves the directory ('..'); refused")
        if any(str(parent) in links for parent in name.parents):
            raise ArchiveError(f"{shown} lies under a symlink; refused")
        if member.name in seen:
            raise ArchiveError(f"{shown} appears twice; refused")
        seen.add(member.name)
        if member.issym():
            target = PurePosixPath(member.linkname)
            inside = PurePosixPath(*name.parts[:-1])
            depth = len(inside.parts)
            for part in target.parts:
                depth += -1 if part == ".." else 0 if part == "." else 1
                if depth < 0:
                    break
            if target.is_absolute() or depth < 0:
                raise ArchiveError(f"{shown} links outside the directory; refused")
            links.add(member.name)
        elif not (member.isreg() or member.isdir()):
            raise ArchiveError(f"{shown} is not a file, directory or symlink; refused")


def unpack_tar(tar: bytes, destination: Path, digest: str) -> None:
    """Unpack a checked tar into an empty destination: every member checked before anything
    is written, then tarfile's 'data' filter on each as it is extracted."""
    with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
        members = archive.getmembers()
        check_members(members, digest)
        archive.errorlevel = 2
        try:
            archive.extractall(destination, members=members, filter="data")
        except tarfile.FilterError as exc:
            raise ArchiveError(f"the stored archive {digest[:12]}: {exc}; refused") from exc
    check_links(destination, digest)


def check_links(root: Path, digest: str, *, label: str | None = None) -> None:
    """Refuse a tree with a symlink that resolves outside it: links through links ('a' ->
    'b/..' with 'b' -> '..') pass a check of each link alone but not this one."""
    whose = label or f"the stored archive {digest[:12]}"
    real_root = Path(os.path.realpath(root))
    for here, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(here, name)
            if not path.is_symlink():
                continue
            resolved = Path(os.path.realpath(path))
            if resolved != real_root and real_root not in resolved.parents:
                shown = path.relative_to(root).as_posix()
                raise ArchiveError(
                    f"{whose}: member {shown!r} links outside the directory; refused"
                )


def make_read_only(root: Path) -> None:
    """Files 0444 (0555 if executable), directories 0555, bottom up; links are left alone."""
    for here, dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(here, name)
            if os.path.islink(path):
                continue
            mode = os.lstat(path).st_mode
            os.chmod(path, 0o555 if mode & stat.S_IXUSR else 0o444)
        for name in dirs:
            path = os.path.join(here, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555)
    os.chmod(root, 0o555)
