"""`cardshark compare NEW BASE --game G`: two bots on the same deals, a sequential test per set.

A set is one deal (seed) played in every seat rotation twice, NEW and BASE swapping seats the
second time (for two seats, the two rotations already swap them); the other seats hold the
field. Its value is NEW's summed score minus BASE's over the set, divided by its matches.
After each set the GSPRT of tournaments.sequential decides: better, not better, or go on.
Finished sets are saved in LOG_DIR/compare/ID.json; an interrupted run continues from them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import random
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from games.registry import get_game
from server.bots.house import house_bot as stored_house_bot
from server.bots.house import is_house, parse_house
from server.bots.process import ManagedBot
from server.bots.sandbox import SandboxPolicy
from server.bots.start import BotToStart
from server.cli.common import (
    DbOption,
    JsonOption,
    SandboxOption,
    TransportOption,
    check_transport,
    clear_errors,
    errors,
    fail,
    log_directory,
    open_store,
    require_sandbox,
    sandbox_policy,
    stored_code,
)
from server.match.records import ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.arena import Arena
from server.play.preflight import start_managed
from tournaments.schedule import SEED_LIMIT
from tournaments.sequential import (
    MIN_SETS,
    UNDECIDED,
    Interval,
    SprtResult,
    SprtSettings,
    SprtStep,
    sprt,
    sprt_steps,
)
from tournaments.store import Store

# H1's default margin: NEW ahead by half a point a match, small beside the 15 or so points
# a Knaves seat scores in a match; set it in the game's points (docs/statistics.md).
DEFAULT_H1 = 0.5
DEFAULT_MAX_SETS = 200
MAX_VOIDS = 3  # a match the server voided (its own failure) is replayed this often


@dataclass(frozen=True)
class Entrant:
    """A seat-holder of a compare run: its role, stored bot name and command."""

    role: str  # "new", "base", "field1", ...
    bot: str
    command: str
    workdir: Path | None = None  # its stored code, unpacked (bot add --dir)

    @property
    def name(self) -> str:
        """The process's name in logs and match records."""
        return f"{self.role}.{self.bot}"


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


def entrants(store: Store, config: Config) -> list[tuple[Entrant, str | None]]:
    """NEW, BASE and the field as managed bots (house: names registered on first use), each
    with the digest of its stored code, if it has some."""
    names = [config.new, config.base, *config.field]
    houses = {n: parse_house(n) for n in names if is_house(n)}  # all checked before storing
    out = []
    roles = ["new", "base", *(f"field{i}" for i in range(1, len(config.field) + 1))]
    for role, name in zip(roles, names, strict=True):
        stored = stored_house_bot(store, houses[name]) if name in houses else name
        bot = store.get_bot(stored)
        if not bot.command:
            fail(
                f"{name} is a remote bot (no command); compare starts its bots itself: "
                "give a managed bot (bot add NAME --command ...) or a house: name"
            )
        out.append((Entrant(role, bot.name, bot.command), bot.code_digest))
    return out


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


@dataclass
class Run:
    """A compare run in play: config, settings, entrants, where it is saved, its sets."""

    config: Config
    settings: SprtSettings
    max_sets: int
    players: list[Entrant]
    seats: int
    path: Path
    state: dict[str, Any]
    sandbox: SandboxPolicy
    log_dir: Path
    transport: str = "local"

    @property
    def differences(self) -> list[float]:
        """The per-set values so far, in order."""
        return [float(s["difference"]) for s in self.state["sets"]]

    def decided(self) -> SprtResult | None:
        """The verdict the saved sets already reach, if any (the cap counts too)."""
        result = sprt(self.differences, self.settings, self.max_sets)
        if result.verdict != UNDECIDED or len(self.differences) >= self.max_sets:
            return result
        return None


async def play_sets(run: Run, say: Callable[[str], None]) -> str:
    """Play sets until the test decides or the cap; '' or why the run stopped early."""
    clock = ClockSettings(move_ms=run.config.move_ms)
    async with Arena(run.log_dir, sandbox=run.sandbox, transport=run.transport) as arena:
        starts = [BotToStart(p.name, p.name, p.command, workdir=p.workdir) for p in run.players]
        preflight = await start_managed(arena, starts, clock.no_show_s)
        if preflight.failures:
            return "\n".join(f.message() for f in preflight.failures)
        identities = [BotIdentity(p.name, p.name) for p in run.players]
        seatings = set_seats(run.seats)
        while run.decided() is None:
            index = len(run.state["sets"])
            seed = set_seed(run.config.seed, index)
            records = await asyncio.gather(
                *(
                    play_one(arena, run, [identities[i] for i in seating], seed, index, m, clock)
                    for m, seating in enumerate(seatings)
                )
            )
            scores = [list(r.scores) for r in records]
            run.state["sets"].append(
                {
                    "set": index + 1,
                    "seed": seed,
                    "difference": set_difference(seatings, scores),
                    "matches": [
                        {"seats": [run.players[i].role for i in seating], "scores": score,
                         "faults": [len(r.faults_of(s)) for s in range(run.seats)]}
                        for seating, score, r in zip(seatings, scores, records, strict=True)
                    ],
                }
            )  # fmt: skip
            save_state(run.path, run.state)
            steps = list(sprt_steps(run.differences, run.settings))
            matches = len(run.state["sets"]) * len(seatings)
            say(progress_line(steps[-1], matches, run.settings.min_sets))
            gone = [b for b in preflight.started if b.exited]
            if gone:
                return stopped(gone)
    return ""


def stopped(gone: list[ManagedBot]) -> str:
    """Why the run cannot go on: the bots whose processes ended."""
    return "; ".join(f"{b.name} {b.exit_description()} (log {b.log_path})" for b in gone)


async def play_one(
    arena: Arena,
    run: Run,
    seated: list[BotIdentity],
    seed: int,
    index: int,
    match: int,
    clock: ClockSettings,
) -> MatchRecord:
    """One match of a set, replayed if the server voided it."""
    for attempt in range(MAX_VOIDS):
        # The match id names the run, set, match and attempt: house bots draw their noise
        # from it, so a resumed run replays the same matches.
        match_id = f"compare-{run.config.id}-{index + 1}-{match + 1}" + (
            f".{attempt}" if attempt else ""
        )
        record = await arena.play(
            run.config.game, seated, seed=seed, clock=clock, match_id=match_id
        )
        if record.status == "finished":
            return record
    raise RuntimeError(
        f"set {index + 1}, match {match + 1} voided {MAX_VOIDS} times: {record.reason}"
    )


def compare(
    new: Annotated[
        str | None, typer.Argument(help="The bot under test (a bot name or house:GAME:noise=X).")
    ] = None,
    base: Annotated[str | None, typer.Argument(help="The bot it is measured against.")] = None,
    game: Annotated[
        str | None, typer.Option("--game", help="The game to play (see `cardshark games`).")
    ] = None,
    field: Annotated[
        str | None,
        typer.Option(
            "--field",
            help="Bots in the other seats, comma-separated: one for every seat or one per "
            "seat (default: the game's rule bot, house:GAME:noise=0).",
        ),
    ] = None,
    h0: Annotated[
        float, typer.Option("--h0", help="H0: NEW leads by at most this, in points a match.")
    ] = 0.0,
    h1: Annotated[
        float, typer.Option("--h1", help="H1: NEW leads by at least this, in points a match.")
    ] = DEFAULT_H1,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Chance of 'better' when H0 holds.")
    ] = 0.05,
    beta: Annotated[
        float, typer.Option("--beta", help="Chance of 'not better' when H1 holds.")
    ] = 0.05,
    max_sets: Annotated[
        int, typer.Option("--max-sets", min=1, help="Stop undecided after this many sets.")
    ] = DEFAULT_MAX_SETS,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the deals (default: random, printed).")
    ] = None,
    move_ms: Annotated[
        int | None, typer.Option("--move-ms", min=1, help="Time per move (game default).")
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue the saved run with this id.")
    ] = None,
    log_dir: Annotated[
        Path,
        typer.Option("--log-dir", help="Bots' stderr, and finished sets in compare/ID.json."),
    ] = Path("logs"),
    sandbox: SandboxOption = "bwrap",
    transport: TransportOption = "local",
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Play NEW and BASE on the same deals in every seat until a sequential test decides."""
    check_transport(transport)
    try:
        settings = SprtSettings(h0, h1, alpha, beta)
    except ValueError as exc:
        fail(str(exc))
    if resume is not None:
        path = state_path(log_dir, resume)
        if not path.exists():
            fail(f"no saved compare run {resume!r} (looked for {path})")
        config = Config.from_json(load_state(path)["config"])
        given = {
            "NEW": (new, config.new),
            "BASE": (base, config.base),
            "--game": (game, config.game),
        }
        for what, (value, saved) in given.items():
            if value is not None and value != saved:
                fail(f"{what} {value!r} differs from run {resume}'s {saved!r}")
    else:
        if new is None or base is None or game is None:
            fail("give NEW, BASE and --game (or --resume ID)")
        with clear_errors():
            spec = get_game(game).spec
        slots = spec.default_seats - 2
        field_names = [f.strip() for f in (field or "").split(",") if f.strip()]
        if slots == 0 and field_names:
            fail(f"{spec.title} has two seats: no room for a --field")
        if not field_names:
            field_names = [f"house:{spec.name}:noise=0"]
        if slots and len(field_names) not in (1, slots):
            fail(f"--field needs 1 or {slots} bots for {spec.title}'s {slots} other seats")
        config = Config(
            spec.name,
            new,
            base,
            tuple(field_names * slots if len(field_names) == 1 else field_names)[:slots],
            secrets.randbelow(2**31) if seed is None else seed,
            move_ms or spec.move_ms,
        )
    path = state_path(log_dir, config.id)
    seats = get_game(config.game).spec.default_seats

    def say(line: str) -> None:
        print(line, file=sys.stderr if as_json else sys.stdout, flush=True)

    with open_store(db, create=True) as store:
        found = entrants(store, config)
        policy = sandbox_policy(sandbox, 1024, 0, 64, store, log_dir, check=False)
        require_sandbox(policy)
        players = [replace(p, workdir=stored_code(store, p.bot, d, policy)) for p, d in found]
    log_directory(log_dir)
    state = load_state(path) if path.exists() else {"config": config.to_json(), "sets": []}
    run = Run(
        config,
        settings,
        max_sets,
        players,
        seats,
        path,
        state,
        policy,
        log_dir / "compare",
        transport,
    )
    per_set = len(set_seats(seats))
    field_text = ", ".join(config.field) or "none"
    say(
        f"compare {config.id}: {config.new} vs {config.base} in {get_game(config.game).spec.title}"
        f", field {field_text}, seed {config.seed}; H0 <= {h0:g}, H1 >= {h1:g} points a match, "
        f"alpha {alpha:g}, beta {beta:g}; sets of {per_set} matches, at most {max_sets}"
    )
    if state["sets"]:
        say(f"continuing from {len(state['sets'])} saved sets ({path})")
    why = ""
    if run.decided() is None:
        with clear_errors():
            try:
                why = asyncio.run(play_sets(run, say))
            except KeyboardInterrupt:
                errors.print(
                    f"interrupted after {len(run.state['sets'])} sets, saved in {path}; "
                    f"continue with: cardshark compare --resume {config.id}",
                    highlight=False,
                    soft_wrap=True,
                )
                raise typer.Exit(130) from None
    if why:
        errors.print(f"error: compare stopped: {why}", markup=False, highlight=False)
        errors.print(
            f"finished sets are saved; continue with: cardshark compare --resume {config.id}"
        )
        raise typer.Exit(1)
    result = sprt(run.differences, settings, max_sets)
    if as_json:
        print(
            json.dumps(
                result_json(config, settings, result, run.differences, max_sets, per_set, path)
            )
        )
    else:
        say(verdict_line(config, result, max_sets, per_set))
