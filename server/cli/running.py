"""Playing a stored tournament from the command line, with progress."""

from __future__ import annotations

import asyncio

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from server.cli.common import (
    check_clock,
    console,
    errors,
    require_sandbox,
)
from server.load import concurrency_warning, fitting_concurrency
from server.sandbox import (
    NO_SANDBOX,
    SandboxPolicy,
)
from server.tls import TlsConfig
from tournaments.store import Store


def run_with_progress(
    store: Store,
    tournament_id: int,
    concurrency: int | None,
    port: int,
    host: str = "127.0.0.1",
    tls: TlsConfig | None = None,
    sandbox: SandboxPolicy = NO_SANDBOX,
    clock: str = "cpu",
) -> None:
    """Play a tournament's unfinished matches with a live progress bar."""
    check_clock(clock)
    from server.tournament_runner import Progress as RunProgress
    from server.tournament_runner import run_tournament

    status = store.tournament_status(tournament_id)
    pending = store.pending_matches(tournament_id)
    seats = len(pending[0].seats) if pending else 0
    concurrency = concurrency or fitting_concurrency()
    if (warning := concurrency_warning(concurrency, seats)) is not None:
        errors.print(f"[bold yellow]{warning}[/]", highlight=False, soft_wrap=True)
    if any(b.command for b in store.tournament_entrants(tournament_id)):
        require_sandbox(sandbox)
    remote = [b.name for b in store.tournament_entrants(tournament_id) if not b.command]
    if remote:
        port = port or 50051  # remote bots need an address they can know in advance
        console.print(
            f"remote bots {', '.join(remote)}: start them with --server {host}:{port} "
            + ("--tls-ca CA " if tls else "")
            + "and their tokens (no-show after 10 s)"
        )
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("matches"),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[flight]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(
            f"tournament {tournament_id}",
            total=status.scheduled,
            completed=status.finished,
            rate="",
            flight=f"at once ≤{concurrency}",
        )
        started = None
        voided_for_load = 0

        def update(p: RunProgress) -> None:
            nonlocal started, voided_for_load
            import time

            now = time.monotonic()
            started = started or now
            done_here = max(1, p.done - status.finished)
            rate = done_here / max(now - started, 1e-6) if now > started else 0.0
            # The limit shows when the runner lowers it under load.
            flight = f"at once {p.in_flight}/{p.limit}" + (
                f" (of {concurrency})" if p.limit < concurrency else ""
            )
            voided_for_load = p.load_voids
            bar.update(task, completed=p.done, rate=f"{rate:.2f}/s" if rate else "", flight=flight)

        asyncio.run(
            run_tournament(
                store,
                tournament_id,
                concurrency=concurrency,
                port=port,
                host=host,
                on_progress=update,
                tls=tls,
                sandbox=sandbox,
                cpu_clocks=clock == "cpu",
            )
        )
    if voided_for_load:
        errors.print(
            f"[bold yellow]{voided_for_load} match(es) voided for the server's load "
            "(timeouts of several bots at once) and replayed: never rated[/]",
            highlight=False,
            soft_wrap=True,
        )
