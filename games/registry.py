"""Find a registered game by name; every public module in games/ that defines GAME registers."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from games.base import Game
from games.errors import UnknownGameError

_REGISTRY: dict[str, Game[Any]] = {}


def _discover() -> None:
    import games

    for info in pkgutil.iter_modules(games.__path__):
        if info.name.startswith("_"):  # the build's own modules and mypyc's shared library
            continue
        module = importlib.import_module(f"games.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            _REGISTRY[game.spec.name] = game


def all_games() -> dict[str, Game[Any]]:
    """Every registered game by name, sorted."""
    if not _REGISTRY:
        _discover()
    return dict(sorted(_REGISTRY.items()))


def get_game(name: str) -> Game[Any]:
    """The game registered as name, or UnknownGameError listing the known ones."""
    games = all_games()
    if name not in games:
        raise UnknownGameError(name, games)
    return games[name]
