"""One scheduled match played until it is not voided, its store writes in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, Protocol, TypeVar

from server.match.records import ClockSettings, MatchRecord
from server.match.sessions import BotIdentity
from server.play.load import AdaptiveLimit, StormWatch
from server.play.publish import LivePublisher
from tournaments.errors import TournamentError
from tournaments.models import Match, Tournament
from tournaments.store import LOAD_VOID_PREFIX, Store

MAX_VOIDS = 3
MAX_LOAD_VOIDS = 6  # replays of one match for server load before the run gives up, loudly
P = ParamSpec("P")
R = TypeVar("R")


class Referee(Protocol):
    """What plays a match: an Arena in this process, or a run's referee processes."""

    async def play(
        self,
        game_name: str,
        bots: Sequence[BotIdentity],
        seed: int,
        options: Mapping[str, Any] | None = None,
        clock: ClockSettings | None = None,
        match_id: str | None = None,
    ) -> MatchRecord:
        """Play one match attempt to its end and return its record."""
        ...


class StoreWriter:
    """A run's store writes, one at a time on one thread, in the order they were asked for.

    One thread, not the default pool: writes never queue on each other's lock or contend for
    the GIL among themselves, and a match's start is always written before its result.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cardshark-store")

    def submit(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[R]:
        """Queue a write; the future is its result."""
        return asyncio.wrap_future(self._pool.submit(call, *args, **kwargs))

    async def close(self) -> None:
        """Finish the queued writes (or drop those not begun, when cancelled) and stop."""
        try:
            await asyncio.to_thread(self._pool.shutdown)
        except asyncio.CancelledError:
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise


def _retrieve(future: asyncio.Future[Match]) -> None:
    if not future.cancelled():
        future.exception()  # marks it retrieved; a task still awaiting it raises it


async def play_until_not_voided(
    store: Store,
    arena: Referee,
    match: Match,
    identities: dict[int, BotIdentity],
    clock: ClockSettings,
    storms: StormWatch | None = None,
    limit: AdaptiveLimit | None = None,
    load_voids: list[int] | None = None,
    *,
    tournament: Tournament | None = None,
    writer: StoreWriter | None = None,
    code: Mapping[int, str] | None = None,
) -> MatchRecord:
    """Play a match; a match voided by a server failure, or whose timeouts came in a storm
    of the server's load, is stored as void and played again (never rated). With code (the
    digests of seated bots' stored code), every attempt's record names the code per seat.

    With a writer, the store's writes go through it and the match starts playing while its
    start is being written (the writer writes it before anything the match writes later).
    """
    assert match.id is not None
    if tournament is None:
        tournament = await asyncio.to_thread(store.get_tournament, match.tournament_id)

    def write(call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[R]:
        if writer is not None:
            return writer.submit(call, *args, **kwargs)
        return asyncio.ensure_future(asyncio.to_thread(call, *args, **kwargs))

    voids = stormy = 0
    while voids < MAX_VOIDS:
        match_id = match.id
        assert match_id is not None
        started = write(store.start_match, match_id)
        if writer is None:
            await started
        else:  # a failure is raised below; if the play is cancelled first, it is not lost
            started.add_done_callback(_retrieve)
        # Whether this attempt plays with the machine to itself, from start to end.
        solo_from = limit.crowding if limit is not None and limit.in_flight <= 1 else -1
        # Pages in other processes follow it through the store (server/play/publish.py).
        # A run's referee processes publish their own (referee_process.py), through the run.
        publisher = None if getattr(arena, "publishes_live", False) else LivePublisher(
            store, match_id, write
        )
        if publisher is not None:
            publisher.start()
        try:
            record = await arena.play(
                tournament.game,
                [identities[b] for b in match.seats],
                seed=match.seed,
                options=tournament.options,
                clock=clock,
                match_id=str(match.id),
            )
        finally:
            if publisher is not None:
                await publisher.stop()
        if code:
            record.code = [code.get(b) for b in match.seats]
        await started  # long written by now; raises if the start could not be
        timed_out = {record.seats[f.seat] for f in record.faults if f.kind == "timeout"}
        # Played alone at the lowest limit, timeouts are the bots' own, storm or not.
        alone = limit is None or (solo_from >= 0 and limit.alone_since(solo_from))
        stormed = storms is not None and storms.is_storm(timed_out)
        if record.status == "finished" and stormed and not alone:
            stormy += 1
            if stormy > MAX_LOAD_VOIDS:
                raise TournamentError(
                    f"match {match.schedule_index} timed out for load {MAX_LOAD_VOIDS} times, "
                    f"the last at {limit.limit if limit else 1} match(es) at once: this "
                    f"machine cannot serve a {clock.move_ms} ms clock; give a longer --move-ms"
                )
            if limit is not None:
                limit.shrink()
                await limit.requeue()  # replay only once the load has come down
            if load_voids is not None:
                load_voids[0] += 1
            reason = (
                f"{LOAD_VOID_PREFIX} timeouts of {len(timed_out)} bot(s) "
                "in a storm of the server's load"
            )
            match = await write(store.void_match, match_id, reason, record=record.to_json())
            continue
        if record.status == "finished":
            return record
        voids += 1
        match = await write(store.void_match, match_id, record.reason, record=record.to_json())
    raise RuntimeError(f"match {match.schedule_index} voided {MAX_VOIDS} times; stopping")
