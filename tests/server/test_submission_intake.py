"""An upload taken chunk by chunk: refused at the chunk that crosses a cap, checked whole
before it is handed over, and handed over exactly as a stored archive is kept."""

from __future__ import annotations

import gzip
import io
import random
import tarfile
import zlib
from pathlib import Path

import pytest

from server.bots.archive import ArchiveError, ArchiveTooLargeError, pack_directory, read_archive
from server.submissions.intake import ArchiveIntake


def tar_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def fed(data: bytes, chunk: int = 1000, **caps: int) -> ArchiveIntake:
    intake = ArchiveIntake(**caps)
    for start in range(0, len(data), chunk):
        intake.feed(data[start : start + chunk])
    return intake


def test_a_packed_directory_is_taken_whole_as_the_store_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("print('hi')\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.py").write_text("X = 1\n")
    packed = pack_directory(tmp_path)
    received = fed(packed.data, chunk=7).finish()
    assert (received.data, received.digest, received.size) == (
        packed.data,
        packed.digest,
        packed.size,
    )
    assert received.members == 3
    assert read_archive(received.data, received.digest) == gzip.decompress(packed.data)


def test_a_gzip_bomb_is_refused_at_the_chunk_that_crosses_the_cap() -> None:
    cap = 1 << 20
    bomb = gzip.compress(b"\0" * (4 << 20), compresslevel=9)
    intake = ArchiveIntake(cap=cap)
    taken = 0
    with pytest.raises(ArchiveTooLargeError, match="the archive's tar is larger than the cap"):
        for start in range(0, len(bomb), 64):
            intake.feed(bomb[start : start + 64])
            taken += 64
    # Refused well before the end: the tar crossed 1 MiB about a quarter of the way in.
    assert taken < len(bomb) // 2
    assert len(intake._tar) <= cap + 1  # never inflated more than the cap allows


def test_compressed_bytes_over_the_cap_are_refused_before_inflating_them() -> None:
    noise = random.Random(1).randbytes(128 << 10)  # gzip cannot shrink it
    data = gzip.compress(tar_of({"bot.py": noise}))
    with pytest.raises(ArchiveTooLargeError, match="the archive is larger than the cap"):
        fed(data, cap=64 << 10)


# gzip stamps the time into its header: the ids name each case, so that pytest-xdist's workers,
# collecting a second apart, collect the same tests.
NOT_SAFE = [
    (b"", "no archive was sent"),
    (b"PK\x03\x04 a zip", "the archive is not gzip"),
    (gzip.compress(tar_of({"bot.py": b"x"}))[:-9], "truncated"),
    (gzip.compress(tar_of({"bot.py": b"x"})) + b"more", "data after its end"),
    (gzip.compress(b"just text, no tar header" * 40), "the archive is not a tar"),
    (gzip.compress(tar_of({})), "holds no file"),
    (gzip.compress(tar_of({"../up.py": b"x"})), "the upload: member '../up.py' leaves the"),
    (gzip.compress(tar_of({"/etc/x": b"x"})), "the upload: member '/etc/x' has an absolute"),
]


@pytest.mark.parametrize(("data", "message"), NOT_SAFE, ids=[m for _, m in NOT_SAFE])
def test_what_is_not_one_safe_gzipped_tar_is_refused_naming_why(data: bytes, message: str) -> None:
    with pytest.raises(ArchiveError, match=message):
        fed(data).finish()


def test_more_members_than_the_cap_are_refused() -> None:
    data = gzip.compress(tar_of({f"f{i}.py": b"" for i in range(11)}))
    with pytest.raises(ArchiveError, match="has 11 members, more than the cap of 10"):
        fed(data, max_members=10).finish()
    assert fed(data, max_members=11).finish().members == 11


def refusal(data: bytes, *, after: bytes = b"") -> str:
    """The whole message of the refusal of data (fed whole), then of after fed on."""
    intake = ArchiveIntake()
    with pytest.raises(ArchiveError) as refused:
        intake.feed(data)
        if after:
            intake.feed(after)
        intake.finish()
    return str(refused.value)


def test_each_refusal_says_exactly_why_in_its_own_words() -> None:
    one = gzip.compress(tar_of({"bot.py": b"x"}))
    after = "the archive has data after its end; send one gzipped tar"
    assert refusal(one + b"more") == after
    assert refusal(one, after=b"more") == after  # in a chunk of its own
    assert refusal(b"") == "no archive was sent: send the bot's directory as a gzipped tar"
    assert refusal(one[:-9]) == "the archive is truncated: the upload ended inside it"
    assert refusal(gzip.compress(tar_of({}))) == "the archive holds no file"
    assert refusal(zlib.compress(tar_of({"bot.py": b"x"}))).startswith(
        "the archive is not gzip: "
    )  # zlib's own header is not gzip's
    # A gzipped gzip of a tar is no tar: the tar inside is read plain.
    assert refusal(gzip.compress(one)).startswith("the archive is not a tar: ")


def test_an_archive_and_a_tar_of_exactly_the_cap_are_taken() -> None:
    tar = tar_of({"bot.py": b"a" * 3000})
    small = gzip.compress(tar)  # the tar is the larger
    assert fed(small, cap=len(tar)).finish().size == len(tar)
    with pytest.raises(ArchiveTooLargeError, match="the archive's tar is larger"):
        fed(small, cap=len(tar) - 1)
    big = gzip.compress(tar_of({"bot.py": random.Random(2).randbytes(3000)}), compresslevel=0)
    assert fed(big, cap=len(big)).finish().data == big  # the gzip is the larger
    with pytest.raises(ArchiveTooLargeError, match="the archive is larger"):
        fed(big, cap=len(big) - 1)
