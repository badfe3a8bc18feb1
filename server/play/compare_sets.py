"""What a compare run is: its config, its sets and their values, its saved state and its texts.

A set is one deal (seed) played in every seat rotation twice, NEW and BASE swapping seats the
second time (for two seats, the two rotations already swap them); the other seats hold the
field. Its value is NEW's summed score minus BASE's over the set, divided by its matches.
After each set the GSPRT of tournaments.sequential decides: better, not better, or go on.
Finished sets are saved in LOG_DIR/compare/ID.json; an interrupted run continues from them.

Nothing here plays a match (that is server.play.compare): bench/ imports this module alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.base import GameSpec
from tournaments.schedule import SEED_LIMIT
from tournaments.sequential import MIN_SETS, Interval, SprtResult, SprtSettings, SprtStep

# H1's default margin: NEW ahead by half a point a match, small beside the 15 or so points
# a Knaves seat scores in a match; set it in the game's points (docs/statistics.md).
DEFAULT_H1 = 0.5
DEFAULT_MAX_SETS = 200


class CompareError(ValueError):
    """A compare run that cannot start as asked: one line for the person who asked."""


@dataclass(frozen=True)
class Config:
    """What fixes a compare run's matches: game, bots, field, seed and clock."""

    game: str
    new: str
    base: str
    field: tuple[str, ...]
    seed: int
    move_ms: int

    @property
    def id(self) -> str:
        """The run's id: a digest of its config, so the same command finds the same run."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def to_json(self) -> dict[str, Any]:
        """The config as JSON."""
        return {
            "game": self.game,
            "new": self.new,
            "base": self.base,
            "field": list(self.field),
            "seed": self.seed,
            "move_ms": self.move_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Config:
        """The config stored by to_json."""
        return cls(
            data["game"],
            data["new"],
            data["base"],
            tuple(data["field"]),
            int(data["seed"]),
            int(data["move_ms"]),
        )


def new_config(
    spec: GameSpec,
    new: str,
    base: str,
    field: list[str],
    seed: int | None,
    move_ms: int | None,
) -> Config:
    """A new run's config: the field filled to the game's other seats (one name for all of
    them, one per seat, or the rule bot by default), a random seed unless one is given."""
    slots = spec.default_seats - 2
    if slots == 0 and field:
        raise CompareError(f"{spec.title} has two seats: no room for a --field")
    if not field:
        field = [f"house:{spec.name}:noise=0"]
    if slots and len(field) not in (1, slots):
        raise CompareError(
            f"--field needs 1 or {slots} bots for {spec.title}'s {slots} other seats"
        )
    return Config(
        spec.name,
        new,
        base,
        tuple(field * slots if len(field) == 1 else field)[:slots],
        secrets.randbelow(2**31) if seed is None else seed,
        move_ms or spec.move_ms,
    )


def resumed_config(log_dir: Path, run_id: str, given: dict[str, str | None]) -> Config:
    """A saved run's config; `given` (what the command named, e.g. {"NEW": ...}, None where
    it named nothing) must match it."""
    path = state_path(log_dir, run_id)
    if not path.exists():
        raise CompareError(f"no saved compare run {run_id!r} (looked for {path})")
    config = Config.from_json(load_state(path)["config"])
    saved = {"NEW": config.new, "BASE": config.base, "--game": config.game}
    for what, value in given.items():
        if value is not None and value != saved[what]:
            raise CompareError(f"{what} {value!r} differs from run {run_id}'s {saved[what]!r}")
    return config


def set_seats(seats: int) -> list[list[int]]:
    """A set's seatings as entrant indices (0 NEW, 1 BASE, 2... the field): every rotation,
    then every rotation again with NEW and BASE swapped (once only for two seats)."""
    orders = [list(range(seats))]
    if seats > 2:
        orders.append([1, 0, *range(2, seats)])
    return [
        [order[(r + s) % seats] for s in range(seats)] for order in orders for r in range(seats)
    ]


def set_seed(seed: int, index: int) -> int:
    """The deal of set `index` (0-based) of a run with this seed."""
    return random.Random(f"cardshark-compare:{seed}:{index}").randrange(SEED_LIMIT)


def set_difference(seatings: list[list[int]], scores: list[list[int]]) -> float:
    """NEW's summed score minus BASE's over a set's matches, per match."""
    total = sum(
        score[seat.index(0)] - score[seat.index(1)]
        for seat, score in zip(seatings, scores, strict=True)
    )
    return total / len(seatings)


def state_path(log_dir: Path, run_id: str) -> Path:
    """Where a run's finished sets are saved."""
    return log_dir / "compare" / f"{run_id}.json"


def load_state(path: Path) -> dict[str, Any]:
    """A saved run: its config and finished sets."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def save_state(path: Path, data: dict[str, Any]) -> None:
    """Write the run whole or not at all (a Ctrl-C mid-write keeps the last good copy)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=1))
    os.replace(temporary, path)


def progress_line(step: SprtStep, matches: int, min_sets: int = MIN_SETS) -> str:
    """One line after a set: sets, the estimate with its interval, the LLR in its bounds (or,
    before min_sets, where a verdict will fall: the test decides nothing yet)."""
    if step.sets < min_sets:
        where = (
            f"; no verdict before {min_sets} sets (then one at {step.lower:.2f} or "
            f"{step.upper:.2f})"
        )
    else:
        where = f" in ({step.lower:.2f}, {step.upper:.2f})"
    return (
        f"set {step.sets} ({matches} matches): NEW-BASE {step.estimate.mean:+.2f} points a "
        f"match, 95% {interval_text(step.estimate)}; LLR {step.llr:.2f}{where}"
    )


def interval_text(interval: Interval) -> str:
    """An interval as text (unbounded before two sets)."""
    if not math.isfinite(interval.low):
        return "unbounded"
    return f"{interval.low:+.2f} to {interval.high:+.2f}"


def verdict_line(config: Config, result: SprtResult, max_sets: int, per_set: int) -> str:
    """The verdict with the estimate and its interval."""
    step = result.last
    if step is None:
        return f"undecided at --max-sets {max_sets}: no sets played"
    head = {
        "better": f"better: {config.new} beats {config.base}",
        "not better": f"not better: {config.new} is not better than {config.base}",
    }.get(result.verdict, f"undecided at --max-sets {max_sets}: {config.new} vs {config.base}")
    return (
        f"{head} by {step.estimate.mean:+.2f} points a match "
        f"(95% {interval_text(step.estimate)}) after {step.sets} sets "
        f"({step.sets * per_set} matches); LLR {step.llr:.2f}, bounds "
        f"({step.lower:.2f}, {step.upper:.2f})"
    )


def result_json(
    config: Config,
    settings: SprtSettings,
    result: SprtResult,
    differences: list[float],
    max_sets: int,
    per_set: int,
    path: Path,
) -> dict[str, Any]:
    """The verdict and its numbers, for --json."""
    step = result.last
    estimate = step.estimate if step is not None else None
    return {
        "id": config.id,
        **config.to_json(),
        "h0": settings.h0,
        "h1": settings.h1,
        "alpha": settings.alpha,
        "beta": settings.beta,
        "max_sets": max_sets,
        "verdict": result.verdict,
        "sets": 0 if step is None else step.sets,
        "matches": 0 if step is None else step.sets * per_set,
        "mean": None if estimate is None else estimate.mean,
        "low": None if estimate is None or not math.isfinite(estimate.low) else estimate.low,
        "high": None if estimate is None or not math.isfinite(estimate.high) else estimate.high,
        "llr": None if step is None else step.llr,
        "lower": settings.lower,
        "upper": settings.upper,
        "differences": differences[: 0 if step is None else step.sets],
        "state": str(path),
    }
