"""The small tree of errors a rules engine raises; messages quote the bad value."""

from __future__ import annotations

from collections.abc import Iterable


class GameError(Exception):
    """Base of every error raised by a rules engine."""


class UnknownGameError(GameError, LookupError):
    """A game name that is not registered."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown game {name!r}; known games: {', '.join(self.known)}")


class BadOptionError(GameError, ValueError):
    """An option name or value the game does not allow."""

    def __init__(self, option: str, value: object, allowed: str) -> None:
        self.option = option
        self.value = value
        self.allowed = allowed
        super().__init__(f"bad value for option {option!r}: {value!r}; allowed: {allowed}")


class UnknownOptionError(BadOptionError):
    """An option name the game does not have; the message lists the ones it has."""

    def __init__(self, game: str, option: str, value: object, options: list[str]) -> None:
        described = "; its options: " + ", ".join(options) if options else ": it has no options"
        super().__init__(option, value, ", ".join(options) or "none")
        self.args = (f"unknown option {option!r} for {game}{described}",)

    def __str__(self) -> str:
        return str(self.args[0])


class IllegalActionError(GameError, ValueError):
    """An action that is not legal now; the state is left unchanged."""

    def __init__(self, action: str, legal: Iterable[str], reason: str = "") -> None:
        self.action = action
        self.legal = list(legal)
        shown = ", ".join(self.legal[:40]) + (" …" if len(self.legal) > 40 else "")
        why = f" ({reason})" if reason else ""
        super().__init__(f"illegal action {action!r}{why}; legal now: {shown or 'nothing'}")
