"""The typed errors of schedules, storage and ratings; messages name the values at fault."""

from __future__ import annotations

from collections.abc import Iterable


class TournamentError(Exception):
    """Base of every error raised by the tournaments package."""


class ScheduleError(TournamentError, ValueError):
    """A schedule that cannot be built from the given entrants and settings."""


class NotEnoughEntrantsError(ScheduleError):
    """Fewer entrants than the seats of one table."""

    def __init__(self, entrants: int, seats: int) -> None:
        self.entrants = entrants
        self.seats = seats
        super().__init__(
            f"{entrants} entrant{'s' if entrants != 1 else ''} cannot fill a table of "
            f"{seats} seats; add at least {seats - entrants} more"
        )


class TableCountError(ScheduleError):
    """A balanced `tables=N` request that cannot make every pair of entrants meet."""

    def __init__(self, tables: int, entrants: int, seats: int, reason: str) -> None:
        self.tables = tables
        self.entrants = entrants
        self.seats = seats
        super().__init__(
            f"tables={tables} for {entrants} entrants at {seats}-seat tables: {reason}"
        )


class StorageError(TournamentError):
    """A database operation that could not be carried out."""


class DatabaseUrlError(StorageError, ValueError):
    """A database URL that is malformed or names a driver that is not installed."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"bad database URL {url!r}: {reason}")


class DatabaseUnavailableError(StorageError):
    """A database that cannot be reached, opened or written."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"database {url} is unavailable: {reason}")


class SchemaVersionError(StorageError):
    """A database whose schema revision is not the one this cardshark runs on."""

    def __init__(self, url: str, found: str | None, head: str) -> None:
        self.url = url
        self.found = found
        self.head = head
        what = (
            "no schema revision (it was made before cardshark versioned its schema)"
            if found is None
            else f"schema revision {found}"
        )
        super().__init__(f"database {url} has {what}; this cardshark needs revision {head}")


class SchemaOutdatedError(SchemaVersionError):
    """A database on an older schema: `cardshark db upgrade` brings it to this version."""


class SchemaNewerError(SchemaVersionError):
    """A database upgraded by a newer cardshark than this one."""


class NotFoundError(StorageError, LookupError):
    """A bot, tournament or match that does not exist."""

    def __init__(self, kind: str, key: object) -> None:
        self.kind = kind
        self.key = key
        super().__init__(f"no {kind} {key!r}")


class UnknownBotError(NotFoundError):
    """A bot name or id that is not registered (or has been removed)."""

    def __init__(self, key: object, known: Iterable[str] = ()) -> None:
        names = sorted(known)
        super().__init__("bot", key)
        if names:
            shown = ", ".join(names[:20]) + (" …" if len(names) > 20 else "")
            self.args = (f"{self.args[0]}; registered bots: {shown}",)


class UnknownAuthorError(NotFoundError):
    """An author name that is not registered."""

    def __init__(self, key: object, known: Iterable[str] = ()) -> None:
        names = sorted(known)
        super().__init__("author", key)
        if names:
            shown = ", ".join(names[:20]) + (" …" if len(names) > 20 else "")
            self.args = (f"{self.args[0]}; registered authors: {shown}",)


class UnknownTournamentError(NotFoundError):
    """A tournament id that does not exist."""

    def __init__(self, key: object) -> None:
        super().__init__("tournament", key)


class UnknownMatchError(NotFoundError):
    """A match id that does not exist."""

    def __init__(self, key: object) -> None:
        super().__init__("match", key)


class BotNameError(StorageError, ValueError):
    """A bot name that is malformed or already taken."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        super().__init__(f"bot name {name!r} {reason}")


class AuthorNameError(StorageError, ValueError):
    """An author name that is malformed, reserved or already taken."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        super().__init__(f"author name {name!r} {reason}")


class AuthorStateError(StorageError, ValueError):
    """An operation the author's state does not allow (the house author, a disabled one)."""


class AuthorDisabledError(ScheduleError):
    """A bot named for a new tournament whose author is disabled; nothing was stored."""

    def __init__(self, bot: str, author: str) -> None:
        self.bot = bot
        self.author = author
        super().__init__(
            f"bot {bot!r} cannot enter a new tournament: its author {author!r} is disabled"
        )


class MatchStateError(StorageError):
    """An operation that the match's current status does not allow."""

    def __init__(self, match_id: int, status: str, action: str) -> None:
        self.match_id = match_id
        self.status = status
        super().__init__(f"cannot {action} match {match_id}: it is {status}")


class MatchAlreadyFinishedError(MatchStateError):
    """A result for a match that already has one; nothing was written."""

    def __init__(self, match_id: int, action: str = "record a result for") -> None:
        super().__init__(match_id, "already finished", action)


class ResultError(TournamentError, ValueError):
    """A match result that does not fit the match (wrong seat count, bad values)."""


class UnknownSubmissionError(NotFoundError):
    """A submission id that does not exist, or is another author's."""

    def __init__(self, key: object) -> None:
        super().__init__("submission", key)


class SubmissionError(StorageError, ValueError):
    """A submission the store refuses (a name, a game list, a limit): the message says which."""
