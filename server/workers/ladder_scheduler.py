"""A ladder played by `cardshark worker`s: one scheduler keeps their queue fed, a set at a time.

The scheduler holds a PostgreSQL advisory lock for the ladder while it runs, so a second
`ladder run --workers` of the same ladder refuses, naming the holder. It picks a table as a
one-process ladder does (the same field, ratings and pick stream, `server.play.ladder`),
stores the set, queues its matches and waits until the workers have recorded all of them,
then picks again: a ladder with the same seed plays the same sets and rates them the same
on one process or on any number of workers. A worker killed mid-set loses nothing: its
match is voided and replayed by the queue's retry (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import procrastinate
from sqlalchemy import Connection, text

from server.play.ladder import LadderPlan, SetPlayed, candidates, error_text, pick_seed
from server.workers.worker import TASK, queue_matches
from tournaments.errors import TournamentError
from tournaments.matchmaking import pick_table
from tournaments.models import Match, Tournament
from tournaments.store import Store

LOCK_CLASS = 0x4C444452  # "LDDR": the first key of a ladder's advisory lock, its id the second
POLL_S = 0.2  # how often the scheduler reads whether the workers finished the set in play

QUEUED = text(
    "SELECT (args->>'schedule_index')::int FROM procrastinate_jobs "
    "WHERE task_name = :task AND status IN ('todo', 'doing') "
    "AND (args->>'tournament_id')::int = :tid"
)


class SchedulerHeld(TournamentError):
    """Another process schedules this ladder."""


def holder_name() -> str:
    """How this scheduler names itself to a second one: host and pid."""
    return f"cardshark ladder scheduler on {socket.gethostname()} pid {os.getpid()}"


@contextmanager
def scheduler_lock(store: Store, ladder_id: int) -> Iterator[None]:
    """Hold the ladder's advisory lock (on a connection of its own) while inside; raise
    SchedulerHeld naming the holder when another process has it."""
    if store.engine.dialect.name != "postgresql":
        raise TournamentError("a ladder on workers needs PostgreSQL (--db postgresql://...)")
    with store.engine.connect() as conn:
        conn.execute(text("SELECT set_config('application_name', :n, false)"), {"n": holder_name()})
        got = conn.execute(
            text("SELECT pg_try_advisory_lock(:c, :l)"), {"c": LOCK_CLASS, "l": ladder_id}
        ).scalar()
        if not got:
            raise SchedulerHeld(
                f"ladder {ladder_id} is scheduled by another process: {_holder(conn, ladder_id)}"
            )
        try:
            yield
        finally:
            conn.execute(
                text("SELECT pg_advisory_unlock(:c, :l)"), {"c": LOCK_CLASS, "l": ladder_id}
            )
            conn.commit()


def scheduler_holder(store: Store, ladder_id: int) -> str | None:
    """Who schedules the ladder for workers now, or None (or on SQLite: nobody can)."""
    if store.engine.dialect.name != "postgresql":
        return None
    with store.engine.connect() as conn:
        held = _holder(conn, ladder_id)
    return None if held.startswith("(") else held


def _holder(conn: Connection, ladder_id: int) -> str:
    row = conn.execute(
        text(
            "SELECT a.application_name, a.client_addr::text FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.classid = :c AND l.objid = :l AND l.granted"
        ),
        {"c": LOCK_CLASS, "l": ladder_id},
    ).first()
    if row is None:
        return "(it has just let go: try again)"
    return f"{row[0] or 'a session without a name'}" + (f" from {row[1]}" if row[1] else "")


@dataclass
class LadderScheduler:
    """Feeds the workers' queue with a ladder's sets, one at a time."""

    store: Store
    ladder: Tournament
    app: procrastinate.App
    plan: LadderPlan
    poll_s: float = POLL_S
    rated: int = 0

    @property
    def ladder_id(self) -> int:
        """The ladder's id."""
        assert self.ladder.id is not None
        return self.ladder.id

    async def run(self) -> int:
        """Queue and wait for the open set, then pick, queue and wait for new ones until the
        plan's sets are rated (or for ever); the sets rated. A failure is kept for `ladder
        status` and raised as one line."""
        try:
            return await self._schedule()
        except Exception as exc:
            message = f"the scheduler stopped: {error_text(exc)}"
            await asyncio.to_thread(self.store.note_ladder_error, self.ladder_id, message)
            raise TournamentError(f"ladder {self.ladder_id}: {message}") from exc

    async def _schedule(self) -> int:
        pending = await asyncio.to_thread(self.store.pending_matches, self.ladder_id)
        if pending:
            await self._queue_missing(pending)
            await self._wait(pending)
        idle = ""
        while self.plan.sets is None or self.rated < self.plan.sets:
            entries = await asyncio.to_thread(self.store.ladder_field, self.ladder_id)
            number = (await asyncio.to_thread(self.store.get_tournament, self.ladder_id)).rounds
            meetings = await asyncio.to_thread(self.store.ladder_meetings, self.ladder_id)
            table = pick_table(
                # workers start managed bots; a remote bot connects to one process only
                candidates([e for e in entries if e.bot.command], lambda _: True),
                self.ladder.seats,
                pick_seed(self.ladder.seed, number),
                self.plan.rule,
                self.plan.one_per_author,
                meetings=meetings,
            )
            if table is None:
                why = f"waiting for bots: a table seats {self.ladder.seats}, the field has " + (
                    f"{len(entries)}"
                )
                if why != idle and self.plan.on_idle is not None:
                    self.plan.on_idle(why)
                idle = why
                await asyncio.sleep(self.plan.idle_s)
                continue
            idle = ""
            matches = await asyncio.to_thread(self.store.add_ladder_set, self.ladder_id, table)
            await queue_matches(self.app, self.ladder, [m.schedule_index for m in matches])
            await self._wait(matches)
            self.rated += 1
        return self.rated

    async def _queue_missing(self, pending: list[Match]) -> None:
        """Queue the open set's matches that have no job waiting or in play (a scheduler
        stopped between storing a set and queueing it)."""
        queued = await asyncio.to_thread(self._queued)
        missing = [m.schedule_index for m in pending if m.schedule_index not in queued]
        await queue_matches(self.app, self.ladder, missing)

    def _queued(self) -> set[int]:
        with self.store.engine.connect() as conn:
            rows = conn.execute(QUEUED, {"task": TASK, "tid": self.ladder_id}).all()
        return {int(r[0]) for r in rows}

    async def _wait(self, matches: list[Match]) -> None:
        """Until the workers have recorded every match of the set (the ladder's only open
        one); then report it."""
        while await asyncio.to_thread(self.store.pending_matches, self.ladder_id):
            await asyncio.sleep(self.poll_s)
        if self.plan.on_set is not None:
            await asyncio.to_thread(self._report, matches[0].round)

    def _report(self, number: int) -> None:
        assert self.plan.on_set is not None
        names = {b.id: b.name for b in self.store.tournament_entrants(self.ladder_id)}
        done = [
            m for m in self.store.matches(self.ladder_id, include_voided=False) if m.round == number
        ]
        table = list(dict.fromkeys(done[0].seats))
        totals = dict.fromkeys(table, 0.0)
        for match in done:
            scores = (match.result or {}).get("scores", [])
            for bot, score in zip(match.seats, scores, strict=True):
                totals[bot] += float(score)
        status = self.store.tournament_status(self.ladder_id)
        self.plan.on_set(
            SetPlayed(
                number,
                tuple(names.get(b, str(b)) for b in table),
                tuple(totals[b] for b in table),
                status.tournament.rounds,
                status.finished,
            )
        )
