"""Stored authors: registration with a hashed key, listing, disabling, lookup by key."""

# An author key is made, stored and checked exactly as a bot token is (tournaments/store/
# keys.py): 256 random bits shown once, kept only as their SHA-256 hex digest. The house
# author, who owns the organizer's own bots, has no key, so no key finds it.

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from tournaments.errors import AuthorNameError, AuthorStateError, StorageError, UnknownAuthorError
from tournaments.models import HOUSE_AUTHOR, Author, Bot
from tournaments.store.base import StoreBase
from tournaments.store.keys import digest_matches, hash_token, new_token

AUTHOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # as a bot's name


def check_author_name(name: str) -> None:
    """Refuse (AuthorNameError) a malformed name or the house author's: before any write."""
    if not AUTHOR_NAME.fullmatch(name):
        raise AuthorNameError(
            name, "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    if name == HOUSE_AUTHOR:
        raise AuthorNameError(name, "is reserved for the organizer's own bots (bot add)")


@dataclass(frozen=True)
class AuthorRow:
    """An author with the names of their bots (retired bots left out)."""

    author: Author
    bots: list[str]


class AuthorStore(StoreBase):
    """Authors: add (with a key shown once), list, get, disable, find by key."""

    def add_author(self, name: str) -> tuple[Author, str]:
        """Register an author; returns it and its plain key, which is never stored or shown
        again."""
        check_author_name(name)
        key = new_token()
        try:
            with self._write() as session:
                if session.exec(select(Author.id).where(Author.name == name)).first() is not None:
                    raise AuthorNameError(name, "is already taken")
                author = Author(name=name, key_hash=hash_token(key))
                session.add(author)
                session.flush()
        except StorageError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise AuthorNameError(name, "is already taken") from exc
            raise
        return author, key

    def get_author(self, name: str) -> Author:
        """The author with this name, or UnknownAuthorError."""
        with self._read() as session:
            return self._author(session, name)

    def list_authors(self) -> list[AuthorRow]:
        """Every author by name, with their bots' names (retired bots left out)."""
        with self._read() as session:
            authors = session.exec(select(Author).order_by(col(Author.name))).all()
            owned = session.exec(
                select(Bot.author_id, Bot.name)
                .where(col(Bot.removed).is_(None))
                .order_by(col(Bot.name))
            ).all()
        names: dict[int | None, list[str]] = {}
        for author_id, bot in owned:
            names.setdefault(author_id, []).append(bot)
        house = next((a.id for a in authors if a.name == HOUSE_AUTHOR), None)
        orphans = names.pop(None, [])  # a bot without an author is the house author's
        if house is not None:
            names.setdefault(house, []).extend(orphans)
        return [AuthorRow(a, names.get(a.id, [])) for a in authors]

    def author_names(self) -> dict[int, str]:
        """Each author's name by id, for naming a bot's author (Bot.author_id)."""
        with self._read() as session:
            return {i: n for i, n in session.exec(select(Author.id, Author.name)) if i is not None}

    def disable_author(self, name: str) -> bool:
        """Disable an author: their key is refused and their bots enter no tournament created
        from now on (tournaments already created play on as scheduled: docs/storage.md).
        Returns False when they were disabled already. The house author cannot be disabled."""
        if name == HOUSE_AUTHOR:
            raise AuthorStateError(
                f"the {HOUSE_AUTHOR} author cannot be disabled: it owns the organizer's own "
                "bots; remove one with `cardshark bot remove NAME`"
            )
        with self._write() as session:
            author = self._author(session, name)
            if author.disabled:
                return False
            author.disabled = True
            session.add(author)
            return True

    def author_for_key(self, key: str) -> Author | None:
        """The author whose key this is, or None: for a wrong key, and for a disabled author."""
        digest = hash_token(key)
        with self._read() as session:
            author = session.exec(select(Author).where(Author.key_hash == digest)).first()
        if author is None or author.disabled or not digest_matches(author.key_hash, digest):
            return None
        return author

    # -- lookups the bots share ----------------------------------------------------------------

    def _author(self, session: Session, name: str) -> Author:
        author = session.exec(select(Author).where(Author.name == name)).first()
        if author is None:
            raise UnknownAuthorError(name, session.exec(select(Author.name)).all())
        return author

    def _house_author(self, session: Session) -> Author:
        """The house author, made now if this database has none yet (inside a write)."""
        house = session.exec(select(Author).where(Author.name == HOUSE_AUTHOR)).first()
        if house is None:
            house = Author(name=HOUSE_AUTHOR, key_hash=None)
            session.add(house)
            session.flush()
        return house
