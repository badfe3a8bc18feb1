"""An uploaded archive taken in chunk by chunk: sizes refused as they arrive, members checked
before anything is stored."""

# The upload is the author's gzipped tar. Its compressed size and its tar's size are counted
# as each chunk arrives, so an archive over the cap (or a gzip bomb) is refused at the chunk
# that crosses it, with the rest never read. The members are checked on the whole tar, before
# the store sees a byte: the same checks as every stored archive's (server/bots/archive.py).

from __future__ import annotations

import hashlib
import io
import tarfile
import zlib
from dataclasses import dataclass

from server.bots.archive import (
    DEFAULT_CAP_BYTES,
    ArchiveError,
    ArchiveTooLargeError,
    check_members,
)

MAX_MEMBERS = 10_000


@dataclass(frozen=True)
class ReceivedArchive:
    """A checked upload: the gzipped tar as stored, its tar's SHA-256 and size, its files."""

    data: bytes
    digest: str
    size: int
    members: int


class ArchiveIntake:
    """Take an upload's chunks (feed), then check and hand it over (finish)."""

    def __init__(self, cap: int = DEFAULT_CAP_BYTES, max_members: int = MAX_MEMBERS) -> None:
        self.cap = cap
        self.max_members = max_members
        self._gzip = bytearray()
        self._tar = bytearray()
        self._inflate = zlib.decompressobj(wbits=31)

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk; ArchiveError as soon as the upload cannot be one we keep."""
        if self._inflate.eof:
            raise ArchiveError("the archive has data after its end; send one gzipped tar")
        self._gzip += chunk
        if len(self._gzip) > self.cap:
            raise ArchiveTooLargeError("the archive", self.cap)
        try:
            pending = chunk
            while pending and not self._inflate.eof:
                self._tar += self._inflate.decompress(pending, self.cap + 1 - len(self._tar))
                if len(self._tar) > self.cap:
                    raise ArchiveTooLargeError("the archive's tar", self.cap)
                pending = self._inflate.unconsumed_tail
            if self._inflate.unused_data:
                raise ArchiveError("the archive has data after its end; send one gzipped tar")
        except zlib.error as exc:
            raise ArchiveError(f"the archive is not gzip: {exc}") from None

    def finish(self) -> ReceivedArchive:
        """The whole upload, checked: a complete gzipped tar whose every member could be
        unpacked safely (ArchiveError naming the first that could not)."""
        if not self._gzip:
            raise ArchiveError("no archive was sent: send the bot's directory as a gzipped tar")
        if not self._inflate.eof:
            raise ArchiveError("the archive is truncated: the upload ended inside it")
        tar = bytes(self._tar)
        digest = hashlib.sha256(tar).hexdigest()
        try:
            with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
                members = archive.getmembers()
        except tarfile.TarError as exc:
            raise ArchiveError(f"the archive is not a tar: {exc}") from None
        if len(members) > self.max_members:
            raise ArchiveError(
                f"the archive has {len(members)} members, more than the cap of {self.max_members}"
            )
        if not any(m.isreg() for m in members):
            raise ArchiveError("the archive holds no file")
        check_members(members, digest, label="the upload")
        return ReceivedArchive(bytes(self._gzip), digest, len(tar), len(members))
