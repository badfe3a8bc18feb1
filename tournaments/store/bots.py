"""Stored bots: registration with a hashed token, listing, lookup, changes and removal."""

from __future__ import annotations

import re
from typing import Literal

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from tournaments.errors import AuthorStateError, BotNameError, StorageError
from tournaments.models import (
    Bot,
    BotArchive,
    SeatResult,
    Submission,
    TournamentEntrant,
    utc_now,
)
from tournaments.store.authors import AuthorStore
from tournaments.store.keys import digest_matches, hash_token, new_token

BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

__all__ = ["BOT_NAME", "BotStore", "attach_code", "hash_token", "new_token"]


class BotStore(AuthorStore):
    """Bots: add, list, get, remove (delete or retire), find by token, their stored code."""

    def add_bot(
        self,
        name: str,
        command: str | None = None,
        archive: BotArchive | None = None,
        *,
        author: str | None = None,
    ) -> tuple[Bot, str]:
        """Register a bot; returns it and its plain token, which is never stored or shown again.

        With archive (its directory packed), the archive is stored once per digest and the
        bot's command runs in it wherever the bot is played. The bot is author's (a name; a
        disabled author adds none), or without one the house author's (made on first use)."""
        if not BOT_NAME.fullmatch(name):
            raise BotNameError(
                name,
                "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
            )
        token = new_token()
        try:
            with self._write() as session:
                existing = session.exec(select(Bot).where(Bot.name == name)).first()
                if existing is not None:
                    taken = "is taken by a removed bot" if existing.removed else "is already taken"
                    raise BotNameError(name, taken)
                if author is None:
                    owner = self._house_author(session)
                else:
                    owner = self._author(session, author)
                    if owner.disabled:
                        raise AuthorStateError(
                            f"author {owner.name!r} is disabled: they can add no bots"
                        )
                bot = Bot(
                    name=name, token_hash=hash_token(token), command=command, author_id=owner.id
                )
                if archive is not None:
                    attach_code(session, bot, archive)
                session.add(bot)
                session.flush()
        except StorageError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise BotNameError(name, "is already taken") from exc
            raise
        return bot, token

    def update_bot(
        self, key: int | str, command: str | None = None, archive: BotArchive | None = None
    ) -> Bot:
        """Give a bot a new command and/or stored code (None: unchanged); its token, ratings
        and history stay. Code no bot uses any more is dropped."""
        with self._write() as session:
            bot = self._bot(session, key, include_removed=False)
            before = bot.code_digest
            if command is not None:
                bot.command = command
            if archive is not None:
                attach_code(session, bot, archive)
            session.add(bot)
            session.flush()
            if before is not None and before != bot.code_digest:
                self._drop_unused_archive(session, before)
            return bot

    def list_bots(self, *, include_removed: bool = False) -> list[Bot]:
        """Registered bots by name (removed ones only when asked)."""
        with self._read() as session:
            query = select(Bot).order_by(col(Bot.name))
            if not include_removed:
                query = query.where(col(Bot.removed).is_(None))
            return list(session.exec(query).all())

    def get_bot(self, key: int | str, *, include_removed: bool = False) -> Bot:
        """The bot with this id (int) or name (str), or UnknownBotError."""
        with self._read() as session:
            return self._bot(session, key, include_removed=include_removed)

    def remove_bot(self, key: int | str) -> Literal["deleted", "retired"]:
        """Delete a bot that never entered a tournament and that no submission made, else
        retire it (docs/storage.md)."""
        # Retiring keeps matches, ratings and history intact so other bots' numbers and
        # recompute() do not change; the token stops working and the bot leaves listings. A
        # submission's bot is its author's version: its submission names it, and its name
        # stays taken, so a later version of that name numbers on from it.
        with self._write() as session:
            bot = self._bot(session, key, include_removed=False)
            entered = session.exec(
                select(TournamentEntrant.tournament_id).where(TournamentEntrant.bot_id == bot.id)
            ).first()
            played = session.exec(select(SeatResult.id).where(SeatResult.bot_id == bot.id)).first()
            submitted = session.exec(
                select(Submission.id).where(Submission.bot_id == bot.id)
            ).first()
            if entered is None and played is None and submitted is None:
                session.delete(bot)
                session.flush()
                if bot.code_digest is not None:
                    self._drop_unused_archive(session, bot.code_digest)
                return "deleted"
            bot.removed = utc_now()
            session.add(bot)
            return "retired"

    def bot_archive(self, digest: str) -> bytes | None:
        """The stored archive (gzipped tar) with this digest, or None."""
        with self._read() as session:
            row = session.get(BotArchive, digest)
            return None if row is None else bytes(row.data)

    def _drop_unused_archive(self, session: Session, digest: str) -> None:
        used = session.exec(select(Bot.id).where(Bot.code_digest == digest)).first()
        archive = session.get(BotArchive, digest)
        if used is None and archive is not None:
            session.delete(archive)

    def find_bot_by_token(self, token: str) -> Bot | None:
        """The active bot whose token this is, or None."""
        digest = hash_token(token)
        with self._read() as session:
            bot = session.exec(
                select(Bot).where(Bot.token_hash == digest, col(Bot.removed).is_(None))
            ).first()
        if bot is None or not digest_matches(bot.token_hash, digest):
            return None
        return bot


def attach_code(session: Session, bot: Bot, archive: BotArchive) -> None:
    """Store the archive once per digest (before the bot that names it) and point bot at it."""
    if session.get(BotArchive, archive.digest) is None:
        session.add(archive)
        session.flush()
    bot.code_digest = archive.digest
