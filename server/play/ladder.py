"""Play a ladder: pick a table by what the ranking still needs, play its duplicate set, rate
it, and again, until stopped or a number of sets is played (docs/ladder.md).

Bots join while it runs: before each pick the field is read again from the store (its
entrants and every bot accepted from a submission naming the game, less retired bots and
disabled authors), managed bots new to the field are started, and remote bots are seated
only while connected. A set left unfinished by a kill is finished first on the next run.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from server.bots.code import place_code
from server.bots.process import ManagedBot
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.bots.start import BotToStart
from server.match.records import ClockSettings
from server.match.sessions import BotIdentity
from server.play.arena import DEFAULT_TRANSPORT, TOURNAMENT_FINISHED, TOURNAMENT_STOPPED, Arena
from server.play.load import AdaptiveLimit, StormWatch
from server.play.one_match import StoreWriter, play_until_not_voided
from server.play.preflight import start_managed, wrong_game
from server.play.tournament import (
    Run,
    code_cache,
    code_digests,
    database_authenticator,
    identity_for,
)
from server.transport.tls import TlsConfig
from tournaments.committer import OrderedCommitter
from tournaments.errors import TournamentError
from tournaments.matchmaking import Candidate, Rule, pick_table
from tournaments.models import Bot, Match, Tournament
from tournaments.ratings import SeatOutcome
from tournaments.store import FinishedMatch, LadderEntry, Store

IDLE_S = 5.0  # how often a ladder that cannot form a table reads its field again


@dataclass(frozen=True)
class SetPlayed:
    """One set just rated: its number, its table's bot names, each bot's total score over
    the set's matches, and the ladder's sets and matches finished so far."""

    number: int
    names: tuple[str, ...]
    scores: tuple[float, ...]
    sets: int
    matches: int


@dataclass(frozen=True)
class LadderPlan:
    """How a ladder run picks and how long it plays."""

    rule: Rule = "cardshark"
    one_per_author: bool = False
    sets: int | None = None  # this run's sets; None: until stopped
    idle_s: float = IDLE_S
    on_set: Callable[[SetPlayed], None] | None = None
    on_idle: Callable[[str], None] | None = None  # why no table can be formed, once a change


def pick_seed(master_seed: int, set_number: int) -> random.Random:
    """The random stream of a set's pick: from the master seed and the set's number only,
    so the same field and ratings pick the same table again."""
    return random.Random(f"cardshark-ladder-pick:{master_seed}:{set_number}")


def error_text(exc: BaseException) -> str:
    """An error as one line: its message, named by its kind unless it is one of ours."""
    said = " ".join(str(exc).split())  # some libraries' messages span lines
    if isinstance(exc, TournamentError) and said:
        return said
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def candidates(entries: Sequence[LadderEntry], playing: Callable[[int], bool]) -> list[Candidate]:
    """The entries that can sit at a table now, as matchmaking reads them."""
    return [
        Candidate(e.bot_id, e.mu, e.sigma, e.author, e.sets, e.in_flight, float(e.last_set + 1))
        for e in entries
        if playing(e.bot_id)
    ]


async def run_ladder(store: Store, ladder_id: int, arena: Arena, run: Run, plan: LadderPlan) -> int:
    """Play the ladder on a running arena as `plan` says; returns the sets rated this run."""
    ladder = await asyncio.to_thread(store.get_tournament, ladder_id)
    return await _LadderRun(store, ladder, arena, run, plan).play()


@dataclass
class _LadderRun:
    store: Store
    ladder: Tournament
    arena: Arena
    run: Run
    plan: LadderPlan
    started: set[int] = field(default_factory=set)  # managed bots started this run
    starting: set[int] = field(default_factory=set)  # those not through their preflight yet
    out: set[int] = field(default_factory=set)  # bots that cannot play in this run
    spawned: list[ManagedBot] = field(default_factory=list)
    identities: dict[int, BotIdentity] = field(default_factory=dict)
    code: dict[int, str] = field(default_factory=dict)
    writer: StoreWriter = field(default_factory=StoreWriter)
    storms: StormWatch = field(default_factory=StormWatch)
    load_voids: list[int] = field(default_factory=lambda: [0])
    rated: int = 0
    in_play: int | None = None  # the number of the set being played, if one is
    noting: asyncio.Task[None] | None = None  # the errors being stored, in turn

    @property
    def ladder_id(self) -> int:
        assert self.ladder.id is not None
        return self.ladder.id

    async def play(self) -> int:
        settings = ClockSettings(move_ms=self.ladder.clock_ms, bank_ms=self.ladder.bank_ms)
        limit = AdaptiveLimit(max(self.run.concurrency, 2 * self.ladder.seats))
        lag = self.arena.hub.lag
        follower = asyncio.create_task(limit.follow(lambda: lag.percentile(0.9, clear=True)))
        stop_listening = self.arena.hub.listen(on_timeout=self.storms.note)
        self.arena.exit_listeners.append(self._exited)
        reason = TOURNAMENT_STOPPED
        try:
            await self._finish_open_set(settings, limit)
            idle = ""
            while self.plan.sets is None or self.rated < self.plan.sets:
                entries = await asyncio.to_thread(self.store.ladder_field, self.ladder_id)
                await self._bring([e.bot for e in entries], settings)
                number = (await asyncio.to_thread(self.store.get_tournament, self.ladder_id)).rounds
                meetings = await asyncio.to_thread(self.store.ladder_meetings, self.ladder_id)
                table = pick_table(
                    candidates(entries, self._playing),
                    self.ladder.seats,
                    pick_seed(self.ladder.seed, number),
                    self.plan.rule,
                    self.plan.one_per_author,
                    meetings=meetings,
                )
                if table is None:
                    idle = self._idle(entries, idle)
                    await asyncio.sleep(self.plan.idle_s)
                    continue
                idle = ""
                matches = await asyncio.to_thread(self.store.add_ladder_set, self.ladder_id, table)
                await self._play_set(matches, settings, limit)
            reason = TOURNAMENT_FINISHED
        except Exception as exc:  # kept for `ladder status`, then one line for the caller
            what = (
                f"set {self.in_play + 1} could not be played"
                if self.in_play is not None
                else "the run stopped"
            )
            message = f"{what}: {error_text(exc)}"
            await self._note(message)
            raise TournamentError(f"ladder {self.ladder_id}: {message}") from exc
        finally:
            follower.cancel()
            self.arena.exit_listeners.remove(self._exited)
            stop_listening()
            await self.arena.stop_bots(self.spawned, reason)
            await self.writer.close()
            if self.noting is not None:
                await asyncio.gather(self.noting, return_exceptions=True)
        return self.rated

    def _playing(self, bot_id: int) -> bool:
        return bot_id not in self.out and self.arena.hub.live(str(bot_id)) is not None

    def _idle(self, entries: Sequence[LadderEntry], said: str) -> str:
        free = [e.bot.name for e in entries if self._playing(e.bot_id)]
        why = (
            f"waiting for bots: a table seats {self.ladder.seats}"
            + (" of different authors" if self.plan.one_per_author else "")
            + f", {len(free)} can play now"
            + (f" ({', '.join(free)})" if free else "")
        )
        if why != said and self.plan.on_idle is not None:
            self.plan.on_idle(why)
        return why

    def _exited(self, bot: ManagedBot) -> None:
        ids = [b for b, who in self.identities.items() if who.name == bot.name]
        # a bot that ends in its preflight is reported once, by _bring, with the reason
        if ids and ids[0] in self.started - self.starting and ids[0] not in self.out:
            bot_id = ids[0]
            self.out.add(bot_id)
            self._note(f"bot {bot.name!r} left out: {bot.exit_description()}")
            if self.run.on_bot_exit is not None:
                self.run.on_bot_exit(bot.name, bot.exit_description(), bot.log_path)

    async def _bring(self, bots: Sequence[Bot], settings: ClockSettings) -> None:
        """Start the managed bots not started yet; leave out those that fail or whose Hello
        names other games, saying so once."""
        for bot in bots:
            if bot.id is not None:
                self.identities.setdefault(bot.id, identity_for(bot.id, bot.name))
        self.code.update(code_digests(bots))
        new = [
            b
            for b in bots
            if b.id is not None and b.command and b.id not in self.started | self.out
        ]
        failures = []
        if new:
            self.started.update(b.id for b in new if b.id is not None)
            self.starting = {b.id for b in new if b.id is not None}
            managed = [BotToStart(b.name, str(b.id), b.command or "", b.code_digest) for b in new]
            placed, refused = await place_code(
                managed, code_cache(self.arena), self.store.bot_archive
            )
            logs = Path(self.run.log_dir or self.arena.log_dir) / f"tournament-{self.ladder_id}"
            try:
                preflight = await start_managed(self.arena, placed, settings.no_show_s, logs)
            finally:
                self.starting = set()
            self.spawned.extend(preflight.started)
            failures = [*refused, *preflight.failures]
        seated = [(b.name, str(b.id)) for b in bots if b.id is not None and b.id not in self.out]
        for failure in [*failures, *wrong_game(self.arena, seated, self.ladder.game)]:
            self.out.add(int(failure.bot_id))
            self.arena.hub.mark_gone(failure.bot_id, failure.reason)
            self._note(f"bot {failure.name!r} left out: {failure.reason}")
            if self.run.on_bot_exit is not None:
                self.run.on_bot_exit(failure.name, failure.reason, failure.log_path)

    def _note(self, message: str) -> asyncio.Task[None]:
        """Keep an error for `ladder status`, written while play goes on, after those
        noted before it (the last one noted is the last kept)."""
        before = self.noting

        async def write() -> None:
            if before is not None:
                await asyncio.gather(before, return_exceptions=True)
            await asyncio.to_thread(self.store.note_ladder_error, self.ladder_id, message)

        self.noting = asyncio.create_task(write())
        return self.noting

    async def _finish_open_set(self, settings: ClockSettings, limit: AdaptiveLimit) -> None:
        """Play what a stopped run left of its set (a ladder plays one set at a time)."""
        pending = await asyncio.to_thread(self.store.pending_matches, self.ladder_id)
        if not pending:
            return
        seated = {b for m in pending for b in m.seats}
        entrants = await asyncio.to_thread(self.store.tournament_entrants, self.ladder_id)
        await self._bring([b for b in entrants if b.id in seated], settings)
        await self._play_set(pending, settings, limit, counted=False)

    async def _play_set(
        self,
        matches: Sequence[Match],
        settings: ClockSettings,
        limit: AdaptiveLimit,
        counted: bool = True,
    ) -> None:
        """Play a set's matches, commit them in schedule order and report the set; `counted`:
        one of this run's sets (a set a stopped run left open is not)."""
        committer: OrderedCommitter[FinishedMatch] = OrderedCommitter(
            [m.schedule_index for m in matches], self.store.record
        )
        totals: dict[int, float] = {}

        async def play(match: Match) -> None:
            async with limit:
                record = await play_until_not_voided(
                    self.store,
                    self.arena,
                    match,
                    self.identities,
                    settings,
                    self.storms,
                    limit,
                    self.load_voids,
                    tournament=self.ladder,
                    writer=self.writer,
                    code=self.code,
                )
            outcomes = tuple(
                SeatOutcome(score, len(record.faults_of(seat)), record.forfeited[seat])
                for seat, score in enumerate(record.scores)
            )
            for bot, score in zip(match.seats, record.scores, strict=True):
                totals[bot] = totals.get(bot, 0.0) + score
            finished = FinishedMatch(int(record.match_id), outcomes, record.to_json())
            await self.writer.submit(committer.finish, match.schedule_index, finished)

        self.in_play = matches[0].round
        tasks = [asyncio.create_task(play(m)) for m in matches]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
        self.in_play = None
        self.rated += counted
        if self.plan.on_set is not None:
            await self._report(matches[0], totals)

    async def _report(self, first: Match, totals: dict[int, float]) -> None:
        assert self.plan.on_set is not None
        status = await asyncio.to_thread(self.store.tournament_status, self.ladder_id)
        table = list(dict.fromkeys(first.seats))
        self.plan.on_set(
            SetPlayed(
                first.round,
                tuple(self.identities[b].name for b in table),
                tuple(totals.get(b, 0.0) for b in table),
                status.tournament.rounds,
                status.finished,
            )
        )


@dataclass(frozen=True)
class LadderServer:
    """Where a ladder run's own referee listens, and how it confines and times bots."""

    host: str = "127.0.0.1"
    port: int = 0
    tls: TlsConfig | None = None
    sandbox: SandboxPolicy = NO_SANDBOX
    cpu_clocks: bool = True
    transport: str = DEFAULT_TRANSPORT
    log_dir: Path | str = "logs"


async def play_ladder(
    store: Store, ladder_id: int, server: LadderServer, run: Run, plan: LadderPlan
) -> int:
    """Play the ladder on a referee of its own for the run's length; the sets rated."""
    arena = Arena(
        server.log_dir,
        server.host,
        server.port,
        database_authenticator(store),
        tls=server.tls,
        sandbox=server.sandbox,
        cpu_clocks=server.cpu_clocks,
        transport=server.transport,
    )
    async with arena:
        return await run_ladder(store, ladder_id, arena, run, plan)
