"""Stored bot code on this machine: each archive unpacked once per digest into a cache
directory, checked and read-only, which the bot's sandbox mounts read-only as its own.

Workers racing on one machine are safe: each unpacks into a temporary directory of the cache
and renames it into place; a loser finds the winner's tree, checks it and uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from server.bot_archive import (
    DEFAULT_CAP_BYTES,
    ArchiveError,
    make_read_only,
    pack_directory,
    read_archive,
    unpack_tar,
)
from server.preflight import BotToStart, StartFailure
from server.sandbox import SandboxPolicy

CACHE_ENV = "CARDSHARK_BOT_CACHE"
DIGEST = re.compile(r"[0-9a-f]{64}")


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
    """Unpacked bot archives under root, one directory per digest."""

    def __init__(self, root: Path | None = None, cap: int = DEFAULT_CAP_BYTES) -> None:
        self.root = Path(root) if root is not None else default_cache_root()
        self.cap = cap

    def directory(self, digest: str, load: Callable[[], bytes | None]) -> Path:
        """The unpacked tree of digest, unpacked now from load() unless an intact one is
        there; ArchiveError (nothing left behind outside the cache) when it is refused."""
        if not DIGEST.fullmatch(digest):
            raise ArchiveError(f"{digest[:80]!r} is not a SHA-256 digest; refused")
        final = self.root / digest
        if final.is_dir() and not final.is_symlink() and self.intact(final, digest):
            return final
        data = load()
        if data is None:
            raise ArchiveError(f"no archive {digest[:12]} is stored")
        tar = read_archive(data, digest, self.cap)
        self.root.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=self.root))
        try:
            unpack_tar(tar, fresh, digest)
            make_read_only(fresh)
            self._install(fresh, final, digest)
        finally:
            if fresh.exists():
                remove_tree(fresh)
        return final

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
    """The bots with their stored code unpacked (each run in its tree), and a failure for
    each whose code was refused: a server fault (the database's copy), never rated."""
    ready: list[BotToStart] = []
    failures: list[StartFailure] = []
    for bot in bots:
        digest = bot.digest
        if digest is None:
            ready.append(bot)
            continue
        try:
            tree = await asyncio.to_thread(cache.directory, digest, partial(load, digest))
        except (ArchiveError, OSError) as exc:
            reason = f"could not be started: its stored code was refused: {exc}"
            failures.append(StartFailure(bot.name, bot.bot_id, reason, server_fault=True))
            continue
        ready.append(replace(bot, workdir=tree))
    return ready, failures
