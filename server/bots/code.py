"""Stored bot code on this machine: each archive unpacked once per digest into a cache
directory, checked and read-only, which the bot's sandbox mounts read-only as its own.

Workers racing on one machine are safe: each unpacks into a temporary directory of the cache
and renames it into place; a loser finds the winner's tree, checks it and uses it.

The cache keeps to a budget of bytes (CARDSHARK_BOT_CACHE_BYTES, default 2 GiB): after each
unpack, the trees used longest ago go first, but never one in use. A tree is in use while a
process holds a shared lock on its file in .uses/ (a running bot's server does, from its
checkout until the bot stops); the file's mtime is the tree's last use, its text its size.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO

from server.bots.archive import (
    DEFAULT_CAP_BYTES,
    ArchiveError,
    make_read_only,
    pack_directory,
    read_archive,
    unpack_tar,
)
from server.bots.sandbox import SandboxPolicy
from server.bots.start import BotToStart, StartFailure

CACHE_ENV = "CARDSHARK_BOT_CACHE"
BUDGET_ENV = "CARDSHARK_BOT_CACHE_BYTES"
DEFAULT_BUDGET_BYTES = 2 << 30
USES = ".uses"  # beside the trees: one file per digest, locked while the tree is in use
DIGEST = re.compile(r"[0-9a-f]{64}")


def default_budget() -> int:
    """$CARDSHARK_BOT_CACHE_BYTES, else 2 GiB; ValueError naming a bad value."""
    chosen = os.environ.get(BUDGET_ENV)
    if chosen is None:
        return DEFAULT_BUDGET_BYTES
    if not chosen.isdigit():
        raise ValueError(f"{BUDGET_ENV}={chosen!r}: give the budget in bytes, e.g. 2147483648")
    return int(chosen)


def tree_bytes(tree: Path) -> int:
    """The bytes of the files in a tree (links not followed)."""
    total = 0
    for here, _, files in os.walk(tree):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(here, name)).st_size
    return total


def default_cache_root() -> Path:
    """$CARDSHARK_BOT_CACHE, else $XDG_CACHE_HOME/cardshark/bots (~/.cache/cardshark/bots)."""
    if chosen := os.environ.get(CACHE_ENV):
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cardshark" / "bots"


def cache_for(policy: SandboxPolicy) -> CodeCache:
    """The cache a sandbox policy names (its code_cache), else the default one."""
    chosen = policy.code_cache
    return CodeCache(Path(chosen) if chosen is not None else None)


def remove_tree(path: Path) -> None:
    """Remove a tree this module made read-only (its directories made writable first)."""
    for here, dirs, _ in os.walk(path):
        for name in dirs:
            full = os.path.join(here, name)
            if not os.path.islink(full):
                os.chmod(full, 0o700)
    if path.is_dir() and not path.is_symlink():
        os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)


class CodeCache:
    """Unpacked bot archives under root, one directory per digest, within a byte budget."""

    def __init__(
        self, root: Path | None = None, cap: int = DEFAULT_CAP_BYTES, budget: int | None = None
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_root()
        self.cap = cap
        self.budget = default_budget() if budget is None else budget

    def directory(self, digest: str, load: Callable[[], bytes | None]) -> Path:
        """The unpacked tree of digest, unpacked now from load() unless an intact one is
        there; ArchiveError (nothing left behind outside the cache) when it is refused."""
        path, hold = self.checkout(digest, load)
        hold.close()
        return path

    def checkout(self, digest: str, load: Callable[[], bytes | None]) -> tuple[Path, IO[bytes]]:
        """As directory, and the lock that keeps the tree from eviction until it is closed
        (hold it while a bot runs in the tree; it is not inherited by the bot)."""
        if not DIGEST.fullmatch(digest):
            raise ArchiveError(f"{digest[:80]!r} is not a SHA-256 digest; refused")
        final = self.root / digest
        tar = None
        if not final.is_dir() or final.is_symlink():
            tar = self._verified(digest, load)  # a refused archive: nothing written at all
        uses = self.root / USES
        uses.mkdir(parents=True, exist_ok=True)
        hold = (uses / digest).open("ab+")
        try:
            fcntl.flock(hold, fcntl.LOCK_SH)  # waits while an eviction of it finishes
            os.utime(hold.fileno())  # its last use: now
            path, fresh = self._place(digest, lambda: tar or self._verified(digest, load))
            if fresh:
                hold.truncate(0)
                hold.write(str(tree_bytes(path)).encode())
                hold.flush()
                self.prune(keep=digest)
        except BaseException:
            if not final.is_dir():  # refused while unpacking: no use to record
                (uses / digest).unlink(missing_ok=True)
            hold.close()
            raise
        return path, hold

    def prune(self, keep: str = "") -> list[str]:
        """Remove the least recently used trees not in use (nor keep) until the cache is
        within its budget; returns the digests removed."""
        uses = self.root / USES
        trees: list[tuple[float, int, str]] = []
        with contextlib.suppress(OSError):
            for entry in self.root.iterdir():
                if not DIGEST.fullmatch(entry.name) or not entry.is_dir() or entry.is_symlink():
                    continue
                record = uses / entry.name
                try:
                    used = record.stat().st_mtime
                except OSError:  # unpacked before uses were recorded: as old as the tree
                    used = entry.stat().st_mtime
                try:
                    size = int(record.read_text())
                except (OSError, ValueError):
                    size = tree_bytes(entry)
                trees.append((used, size, entry.name))
        total = sum(size for _, size, _ in trees)
        removed = []
        for _, size, digest in sorted(trees):
            if total <= self.budget:
                break
            if digest != keep and self._evict(digest):
                total -= size
                removed.append(digest)
        return removed

    def _evict(self, digest: str) -> bool:
        """Remove a tree unless a process holds it; True when removed."""
        with (self.root / USES / digest).open("ab") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # in use
            aside = Path(tempfile.mkdtemp(prefix=".evicted-", dir=self.root))
            with contextlib.suppress(FileNotFoundError):  # another process evicted it first
                os.rename(self.root / digest, aside / "tree")
            remove_tree(aside)
            return True

    def _verified(self, digest: str, load: Callable[[], bytes | None]) -> bytes:
        """The archive's tar, its digest and size checked (ArchiveError when refused)."""
        data = load()
        if data is None:
            raise ArchiveError(f"no archive {digest[:12]} is stored")
        return read_archive(data, digest, self.cap)

    def _place(self, digest: str, verified: Callable[[], bytes]) -> tuple[Path, bool]:
        """The tree of digest and whether it was unpacked now (from verified())."""
        final = self.root / digest
        if final.is_dir() and not final.is_symlink() and self.intact(final, digest):
            return final, False
        tar = verified()
        self.root.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=self.root))
        try:
            unpack_tar(tar, fresh, digest)
            make_read_only(fresh)
            self._install(fresh, final, digest)
        finally:
            if fresh.exists():
                remove_tree(fresh)
        return final, True

    def intact(self, tree: Path, digest: str) -> bool:
        """True when the tree packs to digest again (nothing in it was altered)."""
        try:
            return pack_directory(tree, self.cap).digest == digest
        except ArchiveError:
            return False

    def _install(self, fresh: Path, final: Path, digest: str) -> None:
        if final.is_dir() and not final.is_symlink() and self.intact(final, digest):
            return  # another process unpacked it meanwhile
        if final.exists() or final.is_symlink():
            # Altered since it was unpacked: set it aside, then drop it.
            aside = Path(tempfile.mkdtemp(prefix=".stale-", dir=self.root))
            with contextlib.suppress(FileNotFoundError):  # another process was first
                os.rename(final, aside / "tree")
            remove_tree(aside)
        try:
            os.rename(fresh, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            # Another process unpacked the same digest first: theirs, if it is intact.
            if not self.intact(final, digest):
                raise ArchiveError(
                    f"{final} does not match its digest after unpacking; remove it"
                ) from exc


async def place_code(
    bots: Sequence[BotToStart], cache: CodeCache, load: Callable[[str], bytes | None]
) -> tuple[list[BotToStart], list[StartFailure]]:
    """The bots with their stored code unpacked (each run in its tree, held from eviction
    until the bot stops), and a failure for each whose code was refused: a server fault (the
    database's copy), never rated."""
    ready: list[BotToStart] = []
    failures: list[StartFailure] = []
    for bot in bots:
        digest = bot.digest
        if digest is None:
            ready.append(bot)
            continue
        try:
            tree, hold = await asyncio.to_thread(cache.checkout, digest, partial(load, digest))
        except (ArchiveError, OSError) as exc:
            reason = f"could not be started: its stored code was refused: {exc}"
            failures.append(StartFailure(bot.name, bot.bot_id, reason, server_fault=True))
            continue
        ready.append(replace(bot, workdir=tree, hold=hold))
    return ready, failures
