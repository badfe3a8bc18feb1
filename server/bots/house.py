"""House bots of known strength: `house:GAME:noise=X` names, resolved to stored managed bots.

`house:knaves:noise=0.25` is the Knaves rule bot (clients/python/examples/knaves_bot.py)
playing a uniformly random legal action with probability 0.25: noise 0 is the rule bot,
noise 1 a random bot. It is stored once, as a managed bot named `house-knaves-noise0.25`.
"""

from __future__ import annotations

import math
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from games.registry import all_games
from tournaments.errors import TournamentError
from tournaments.store import Store

PREFIX = "house:"
EXAMPLES = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples"
SCRIPT = EXAMPLES / "house_bot.py"
ALLOWED = "house:GAME:noise=X with X from 0 (the rule bot) to 1 (random)"


class HouseNameError(TournamentError):
    """A `house:` name that names no house bot."""

    def __init__(self, text: str, why: str) -> None:
        games = ", ".join(sorted(all_games()))
        super().__init__(f"bad house bot {text!r}: {why}; allowed: {ALLOWED}, GAME one of {games}")


@dataclass(frozen=True)
class HouseBot:
    """A game's rule bot that plays a random legal action with probability `noise`."""

    game: str
    noise: float

    @property
    def label(self) -> str:
        """The canonical `house:GAME:noise=X` name."""
        return f"{PREFIX}{self.game}:noise={self.noise:g}"

    @property
    def bot_name(self) -> str:
        """The name it is stored under, e.g. house-knaves-noise0.25."""
        return f"house-{self.game}-noise{self.noise:g}"

    @property
    def command(self) -> str:
        """The managed bot's command: this interpreter running house_bot.py GAME NOISE."""
        return shlex.join([sys.executable, str(SCRIPT), self.game, f"{self.noise:g}"])


def is_house(name: str) -> bool:
    """True for names in the `house:` namespace (valid or not)."""
    return name.startswith(PREFIX)


def parse_house(text: str) -> HouseBot:
    """The house bot a `house:GAME:noise=X` name means (`house:GAME` is noise 0)."""
    if not is_house(text):
        raise HouseNameError(text, f"it does not start with {PREFIX!r}")
    game, sep, rest = text.removeprefix(PREFIX).partition(":")
    if game not in all_games():
        raise HouseNameError(text, f"no game {game!r}")
    if not sep:
        return HouseBot(game, 0.0)
    key, eq, raw = rest.partition("=")
    if key != "noise" or not eq:
        raise HouseNameError(text, f"expected noise=X after the game, not {rest!r}")
    try:
        noise = float(raw)
    except ValueError:
        raise HouseNameError(text, f"noise {raw!r} is not a number") from None
    if not math.isfinite(noise) or not 0.0 <= noise <= 1.0:
        raise HouseNameError(text, f"noise {raw} is outside 0 to 1")
    return HouseBot(game, noise + 0.0)  # + 0.0: -0 is 0


def house_bot(store: Store, house: HouseBot) -> str:
    """The stored name of a house bot, registered (managed, no token shown) on first use."""
    if house.bot_name not in {b.name for b in store.list_bots(include_removed=True)}:
        store.add_bot(house.bot_name, house.command)
    return house.bot_name


def resolve_names(store: Store, names: Sequence[str]) -> list[str]:
    """Bot names with every `house:` name replaced by its stored bot; all are checked before
    any is registered, so a bad name stores nothing."""
    houses = {name: parse_house(name) for name in names if is_house(name)}
    return [house_bot(store, houses[name]) if name in houses else name for name in names]


def example_bots(game: str, seats: int) -> dict[str, str]:
    """The demo's entrants: the game's rule-following example bot and one random bot per seat
    (script names in EXAMPLES)."""
    bots = {f"demo-rules-{game}": f"{game.replace('-', '_')}_bot.py"}
    bots.update({f"demo-random-{i}": "random_bot.py" for i in range(1, seats + 1)})
    return bots
