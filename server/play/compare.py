"""`cardshark compare`'s engine: NEW and BASE on the same deals, a sequential test per set.

The run's config, sets, saved state and texts are in server.play.compare_sets; here its bots
are found (entrants), started in an arena and played set after set until the test decides.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.registry import get_game
from server.bots.house import house_bot as stored_house_bot
from server.bots.house import is_house, parse_house
from server.bots.process import ManagedBot
from server.bots.sandbox import SandboxPolicy
from server.bots.start import BotToStart
from server.match.records import ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.arena import Arena
from server.play.compare_sets import (
    CompareError,
    Config,
    load_state,
    progress_line,
    save_state,
    set_difference,
    set_seats,
    set_seed,
    state_path,
)
from server.play.preflight import start_managed
from tournaments.sequential import UNDECIDED, SprtResult, SprtSettings, sprt, sprt_steps
from tournaments.store import Store

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


def entrants(store: Store, config: Config) -> list[tuple[Entrant, str | None]]:
    """NEW, BASE and the field as managed bots (house: names registered on first use), each
    with the digest of its stored code, if it has some; CompareError names a remote bot."""
    names = [config.new, config.base, *config.field]
    houses = {n: parse_house(n) for n in names if is_house(n)}  # all checked before storing
    out = []
    roles = ["new", "base", *(f"field{i}" for i in range(1, len(config.field) + 1))]
    for role, name in zip(roles, names, strict=True):
        stored = stored_house_bot(store, houses[name]) if name in houses else name
        bot = store.get_bot(stored)
        if not bot.command:
            raise CompareError(
                f"{name} is a remote bot (no command); compare starts its bots itself: "
                "give a managed bot (bot add NAME --command ...) or a house: name"
            )
        out.append((Entrant(role, bot.name, bot.command), bot.code_digest))
    return out


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

    @property
    def per_set(self) -> int:
        """Matches in a set."""
        return len(set_seats(self.seats))

    def decided(self) -> SprtResult | None:
        """The verdict the saved sets already reach, if any (the cap counts too)."""
        result = sprt(self.differences, self.settings, self.max_sets)
        if result.verdict != UNDECIDED or len(self.differences) >= self.max_sets:
            return result
        return None

    def result(self) -> SprtResult:
        """The test's verdict on the sets so far (undecided below the cap)."""
        return sprt(self.differences, self.settings, self.max_sets)


def open_run(
    config: Config,
    settings: SprtSettings,
    max_sets: int,
    players: list[Entrant],
    sandbox: SandboxPolicy,
    log_dir: Path,
    transport: str = "local",
) -> Run:
    """The run of this config, with the sets saved under log_dir (none for a new run)."""
    path = state_path(log_dir, config.id)
    state = load_state(path) if path.exists() else {"config": config.to_json(), "sets": []}
    seats = get_game(config.game).spec.default_seats
    return Run(
        config,
        settings,
        max_sets,
        players,
        seats,
        path,
        state,
        sandbox,
        log_dir / "compare",
        transport,
    )


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
            run.state["sets"].append(set_json(run, seatings, index, seed, records))
            save_state(run.path, run.state)
            steps = list(sprt_steps(run.differences, run.settings))
            matches = len(run.state["sets"]) * len(seatings)
            say(progress_line(steps[-1], matches, run.settings.min_sets))
            gone = [b for b in preflight.started if b.exited]
            if gone:
                return stopped(gone)
    return ""


def set_json(
    run: Run, seatings: list[list[int]], index: int, seed: int, records: list[MatchRecord]
) -> dict[str, Any]:
    """A finished set as saved: its deal, value and every match's seats, scores and faults."""
    scores = [list(r.scores) for r in records]
    return {
        "set": index + 1,
        "seed": seed,
        "difference": set_difference(seatings, scores),
        "matches": [
            {"seats": [run.players[i].role for i in seating], "scores": score,
             "faults": [len(r.faults_of(s)) for s in range(run.seats)]}
            for seating, score, r in zip(seatings, scores, records, strict=True)
        ],
    }  # fmt: skip


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
