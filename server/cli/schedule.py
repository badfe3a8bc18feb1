"""A new tournament's schedule, as `tournament run` and `tournament create` take it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.cli.common import parse_options
from tournaments.models import Tournament
from tournaments.store import Store


@dataclass(frozen=True)
class Schedule:
    """The game, rounds, tables, clock, seats, --option pairs, seed and format of a tournament
    to store."""

    game: str
    rounds: int
    tables: int | None
    move_ms: int | None
    bank_ms: int
    seats: int | None
    options: list[str]
    seed: int | None
    gauntlet: bool

    def create(self, store: Store, names: Sequence[str], worker: str | None = None) -> Tournament:
        """Store the tournament of these entrants and its matches, pending; a bad --option is
        refused in one line, before anything is stored."""
        return store.create_tournament(
            self.game,
            names,
            seats=self.seats,
            options=parse_options(self.options),
            rounds=self.rounds,
            tables=self.tables,
            seed=self.seed,
            clock_ms=self.move_ms,
            bank_ms=self.bank_ms,
            format="gauntlet" if self.gauntlet else "round_robin",
            worker=worker,
        )
