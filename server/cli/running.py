"""Playing a stored tournament from the command line, with progress, warnings and Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from server.bots.sandbox import SandboxPolicy
from server.cli.common import (
    console,
    errors,
    log_directory,
    remote_port,
    require_sandbox,
)
from server.match.records import REMOTE_WAIT_S
from server.play.load import concurrency_warning, fitting_concurrency
from server.transport.tls import TlsConfig
from tournaments.models import TournamentStatus
from tournaments.store import Store

if TYPE_CHECKING:
    from server.cli.referee_options import RefereeOptions
    from server.play.tournament import Progress as RunProgress

PLAIN_UPDATES = 20  # progress lines a run prints when stderr is not a terminal


class Reporter(Protocol):
    """Where a run's progress goes: a live bar on a terminal, plain lines elsewhere."""

    def update(self, progress: RunProgress) -> None:
        """A match was committed."""

    def close(self) -> None:
        """The run ended, however it ended."""


class RunFigures:
    """The figures a progress report shows: done, rate, matches at once."""

    def __init__(self, tournament_id: int, finished: int, scheduled: int, concurrency: int):
        self.tournament_id = tournament_id
        self.done = self.finished_before = finished
        self.scheduled = scheduled
        self.concurrency = concurrency
        self.started = time.monotonic()
        self.flight = f"at once ≤{concurrency}"
        self.load_voids = 0
        self.per_process = ""

    def update(self, p: RunProgress) -> None:
        """Take a progress event's figures."""
        self.done = p.done
        self.load_voids = p.load_voids
        # The limit shows when the runner lowers it under load.
        self.flight = f"at once {p.in_flight}/{p.limit}" + (
            f" (of {self.concurrency})" if p.limit < self.concurrency else ""
        )
        if p.per_process:
            self.per_process = "per process " + "+".join(map(str, p.per_process))

    @property
    def elapsed(self) -> float:
        """Seconds since this run began."""
        return time.monotonic() - self.started

    @property
    def rate(self) -> str:
        """Matches per second in this run, or "" before the first."""
        here = self.done - self.finished_before
        return f"{here / self.elapsed:.2f}/s" if here > 0 and self.elapsed > 0 else ""


class BarReporter:
    """A rich progress bar on a terminal."""

    def __init__(self, figures: RunFigures) -> None:
        self.figures = figures
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("matches"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[flight]}"),
            TextColumn("{task.fields[per_process]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
        )
        self.bar = Progress(*columns, console=console, transient=False)
        self.task = self.bar.add_task(
            f"tournament {figures.tournament_id}",
            total=figures.scheduled,
            completed=figures.done,
            rate="",
            flight=figures.flight,
            per_process=figures.per_process,
        )
        self.bar.start()

    def update(self, progress: RunProgress) -> None:
        """Move the bar."""
        self.figures.update(progress)
        f = self.figures
        self.bar.update(
            self.task, completed=f.done, rate=f.rate, flight=f.flight, per_process=f.per_process
        )

    def close(self) -> None:
        """Leave the bar's last state on screen."""
        self.bar.stop()


class LineReporter:
    """Plain progress lines on stderr, for logs and pipes: every few matches and at the end."""

    def __init__(self, figures: RunFigures) -> None:
        self.figures = figures
        self.step = max(1, figures.scheduled // PLAIN_UPDATES)
        self.printed = figures.done

    def line(self) -> str:
        """The progress as one line."""
        f = self.figures
        rate = f", {f.rate}" if f.rate else ""
        processes = f", {f.per_process}" if f.per_process else ""
        return (
            f"tournament {f.tournament_id}: {f.done}/{f.scheduled} matches{rate}, "
            f"{f.flight}{processes}, {f.elapsed:.1f} s"
        )

    def update(self, progress: RunProgress) -> None:
        """Print a line when another step of matches is done."""
        self.figures.update(progress)
        if (
            self.figures.done - self.printed >= self.step
            or self.figures.done == self.figures.scheduled
        ):
            self.printed = self.figures.done
            errors.print(self.line(), highlight=False, soft_wrap=True, markup=False)

    def close(self) -> None:
        """The last line, unless it was just printed."""
        if self.printed != self.figures.done:
            self.printed = self.figures.done
            errors.print(self.line(), highlight=False, soft_wrap=True, markup=False)


def warn(text: str) -> None:
    """One yellow warning line on stderr; text is shown as written (bots choose parts of it)."""
    errors.print(f"[bold yellow]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)


def bot_stopped(name: str, how: str, log: Path | None) -> None:
    """Tell the organizer, once, that a managed bot is not playing any more."""
    where = f"; log: {log}" if log is not None else ""
    warn(f"bot {name!r} is not playing: {how}; a no-show in its remaining matches{where}")


def run_with_progress(
    store: Store,
    tournament_id: int,
    referee: RefereeOptions,
    tls: TlsConfig | None,
    sandbox: SandboxPolicy,
    concurrency: int | None,
    port: int,
    allow_absent: bool = False,
    wait_s: float = REMOTE_WAIT_S,
    processes: int | None = None,
) -> None:
    """Play a tournament's unfinished matches with progress; Ctrl-C or SIGTERM interrupts it
    (marked interrupted, resumable) without a traceback."""
    host = referee.host

    status = store.tournament_status(tournament_id)
    if status.tournament.status == TournamentStatus.INTERRUPTED.value:
        store.set_tournament_status(tournament_id, TournamentStatus.RUNNING)
    pending = store.pending_matches(tournament_id)
    seats = len(pending[0].seats) if pending else 0
    concurrency = concurrency or fitting_concurrency()
    if (warning := concurrency_warning(concurrency, seats)) is not None:
        errors.print(f"[bold yellow]{warning}[/]", highlight=False, soft_wrap=True)
    entrants = store.tournament_entrants(tournament_id)
    if any(b.command for b in entrants):
        require_sandbox(sandbox)
        log_directory(Path("logs"), option=None)  # run_tournament's default
    remote = [b.name for b in entrants if not b.command]
    if remote:
        port = remote_port(host, port)  # remote bots need an address they can know in advance
        console.print(
            f"remote bots {', '.join(remote)}: start them with --server {host}:{port} "
            + ("--tls-ca CA " if tls else "")
            + f"and their tokens; the run waits up to {wait_s:g} s for them before the "
            "first match",
            highlight=False,
        )
        if processes is not None and processes > 1:
            warn(f"remote bots connect to this process: --processes {processes} is not used")
    plan = RunPlan(
        store,
        tournament_id,
        referee,
        tls,
        sandbox,
        concurrency,
        port,
        allow_absent,
        wait_s,
        processes,
    )
    plan.run(RunFigures(tournament_id, status.finished, status.scheduled, concurrency))


@dataclass(frozen=True)
class RunPlan:
    """What `run_with_progress` plays, checked: the tournament, the referee's options, the
    matches at once and the port remote bots dial."""

    store: Store
    tournament_id: int
    referee: RefereeOptions
    tls: TlsConfig | None
    sandbox: SandboxPolicy
    concurrency: int
    port: int
    allow_absent: bool
    wait_s: float
    processes: int | None = None  # None: as many as the run pays for (auto_processes)

    def run(self, figures: RunFigures) -> None:
        """Play with a progress report; an interruption exits 130 (143 on SIGTERM)."""
        reporter: Reporter = BarReporter(figures) if console.is_terminal else LineReporter(figures)
        stopped_by: list[str] = []
        try:
            asyncio.run(self.play(reporter, stopped_by))
        except (KeyboardInterrupt, asyncio.CancelledError):
            reporter.close()
            interrupted(self.store, self.tournament_id, stopped_by[0] if stopped_by else "Ctrl-C")
        finally:
            reporter.close()
        if figures.load_voids:
            errors.print(
                f"[bold yellow]{figures.load_voids} match(es) voided for the server's load "
                "(timeouts of several bots at once) and replayed: never rated[/]",
                highlight=False,
                soft_wrap=True,
            )

    async def play(self, reporter: Reporter, stopped_by: list[str]) -> None:
        """Play the unfinished matches; SIGTERM cancels this task (noted in stopped_by)."""
        from server.play.tournament import run_tournament

        cancel_on_sigterm(stopped_by)
        await run_tournament(
            self.store,
            self.tournament_id,
            concurrency=self.concurrency,
            port=self.port,
            host=self.referee.host,
            on_progress=reporter.update,
            tls=self.tls,
            sandbox=self.sandbox,
            cpu_clocks=self.referee.cpu_clocks,
            allow_absent=self.allow_absent,
            on_bot_exit=bot_stopped,
            transport=self.referee.transport,
            remote_wait_s=self.wait_s,
            on_waiting=self.waiting,
            processes=self.processes,
        )

    def waiting(self, names: list[str]) -> None:
        """Say which remote bots the run waits for, and where they connect."""
        where = f"{self.referee.host}:{self.port}"
        console.print(
            f"waiting up to {self.wait_s:g} s for remote bot(s) {', '.join(names)} to connect "
            f"to {where}",
            highlight=False,
        )


def cancel_on_sigterm(stopped_by: list[str]) -> None:
    """SIGTERM cancels the running task, noting "SIGTERM" in stopped_by (Ctrl-C raises
    KeyboardInterrupt as ever)."""
    task = asyncio.current_task()
    assert task is not None

    def terminate() -> None:
        stopped_by.append("SIGTERM")
        task.cancel()

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminate)


def interrupted(store: Store, tournament_id: int, how: str) -> None:
    """Mark the tournament interrupted, say how to resume it, and exit 130 (143 on SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this short
    progress = store.tournament_status(tournament_id)
    if progress.finished < progress.scheduled:
        store.set_tournament_status(tournament_id, TournamentStatus.INTERRUPTED)
    errors.print(
        f"interrupted by {how}: tournament {tournament_id} has {progress.finished} of "
        f"{progress.scheduled} matches finished and saved; resume it with:\n"
        f"  cardshark tournament resume {tournament_id}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    raise typer.Exit(143 if how == "SIGTERM" else 130)
