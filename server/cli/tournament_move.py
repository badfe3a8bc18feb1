"""`cardshark tournament move`: another worker plays a tournament's matches from now on.

server.workers.worker is imported where it is used: procrastinate needs psycopg, which only the
`postgres` extra installs."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer
from sqlalchemy.exc import ProgrammingError

from server.cli.common import DbOption, console, fail, open_store


def tournament_move(
    tournament_id: int,
    worker: Annotated[
        str | None,
        typer.Option("--worker", help="The worker (its --name) that plays it from now on."),
    ] = None,
    any_worker: Annotated[
        bool,
        typer.Option("--any", help="Any worker plays it (not with remote bots)."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Pin a queued tournament to another worker (or to none), its waiting matches with it:
    for a worker that is gone for good. Remote bots must then dial the new worker."""
    if (worker is None) == (not any_worker):
        fail("give --worker NAME (the worker that plays it from now on) or --any, not both")
    if worker is not None and not worker.strip():
        fail("--worker needs a worker's name (its --name)")
    from server.workers.worker import QUEUE, move_jobs, worker_queue

    with open_store(db) as store:
        if store.engine.dialect.name != "postgresql":
            fail(
                "workers share a PostgreSQL database, and this one is "
                f"{store.engine.dialect.name}: `cardshark tournament resume "
                f"{tournament_id}` plays it here"
            )
        # open_store turns the store's errors (no such tournament, finished) into one line.
        remote = [b.name for b in store.tournament_entrants(tournament_id) if not b.command]
        if worker is None and remote:
            fail(
                f"remote {'bots' if len(remote) > 1 else 'bot'} {', '.join(map(repr, remote))} "
                "can play only on the worker they dial: give --worker NAME"
            )
        before = store.get_tournament(tournament_id).worker
        moved: Counter[str] = Counter()
        queue = QUEUE if worker is None else worker_queue(worker)
        try:
            store.pin_tournament(tournament_id, worker, move_jobs(tournament_id, queue, moved))
        except ProgrammingError:
            fail("this database has no match queue: run `cardshark db upgrade` first")
    now = f"worker {worker}" if worker else "any worker"
    console.print(
        f"tournament {tournament_id}: played by {now} from now on "
        f"(before: {f'worker {before}' if before else 'any worker'}); "
        f"{moved['todo']} waiting matches moved to it",
        highlight=False,
    )
    if moved["doing"]:
        console.print(
            f"{moved['doing']} in play on {f'worker {before}' if before else 'other workers'}: "
            f"finished there, or, if that worker is gone, handed to {now} once found stalled "
            "(`worker --stalled-after`)",
            highlight=False,
        )
    if remote:
        console.print(
            f"remote {'bots' if len(remote) > 1 else 'bot'} {', '.join(remote)}: dial worker "
            f"{worker} now (its --port)",
            highlight=False,
        )
