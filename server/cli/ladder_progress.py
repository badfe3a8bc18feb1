"""A ladder run's progress, as `tournament run` shows a tournament's: a live bar on a
terminal, plain lines on stderr elsewhere, and one line at the end saying what was played."""

from __future__ import annotations

import time
from typing import Protocol

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from server.cli.common import console, errors
from server.cli.running import PLAIN_UPDATES
from server.play.ladder import SetPlayed
from tournaments.store import Store

ENDLESS_STEP = 10  # sets between plain lines of a run without --sets


class LadderFigures:
    """What a ladder run's progress shows: sets done (of those asked), matches, rate, time."""

    def __init__(self, ladder_id: int, asked: int | None, sets: int, matches: int) -> None:
        self.ladder_id = ladder_id
        self.asked = asked
        self.sets = self.sets_before = sets
        self.matches = self.matches_before = matches
        self.started = time.monotonic()

    @classmethod
    def of(cls, store: Store, ladder_id: int, asked: int | None) -> LadderFigures:
        """The figures of a run about to start: the ladder's sets and matches so far."""
        status = store.tournament_status(ladder_id)
        return cls(ladder_id, asked, status.tournament.rounds, status.finished)

    def update(self, played: SetPlayed) -> None:
        """Take a set's figures (the ladder's sets and matches in all, once it was rated)."""
        self.sets = played.sets
        self.matches = played.matches

    @property
    def done(self) -> int:
        """Sets this run added and finished (a set a stopped run left open is not one)."""
        return self.sets - self.sets_before

    @property
    def played(self) -> int:
        """Matches this run finished."""
        return self.matches - self.matches_before

    @property
    def elapsed(self) -> float:
        """Seconds since this run began."""
        return time.monotonic() - self.started

    @property
    def rate(self) -> str:
        """Matches per second in this run, or "" before the first."""
        elapsed = self.elapsed
        return f"{self.played / elapsed:.2f}/s" if self.played > 0 and elapsed > 0 else ""

    @property
    def sets_shown(self) -> str:
        """Sets done, of those asked when --sets was given."""
        return f"{self.done}/{self.asked}" if self.asked is not None else str(self.done)

    def line(self) -> str:
        """The progress as one line."""
        rate = f", {self.rate}" if self.rate else ""
        return (
            f"ladder {self.ladder_id}: {self.sets_shown} sets, {self.played} matches{rate}, "
            f"{self.elapsed:.1f} s"
        )

    def summary(self) -> str:
        """What this run played, and the ladder's figures in all."""
        return (
            f"played {_sets(self.done)}, {_matches(self.played)} in {self.elapsed:.1f} s "
            f"({_sets(self.sets)}, {_matches(self.matches)} in all)"
        )


def _sets(count: int) -> str:
    return f"{count} set" + ("" if count == 1 else "s")


def _matches(count: int) -> str:
    return f"{count} match" + ("" if count == 1 else "es")


class LadderReporter(Protocol):
    """Where a ladder run's progress goes."""

    def update(self, played: SetPlayed) -> None:
        """A set was rated."""

    def close(self) -> None:
        """The run ended, however it ended."""


class LadderBar:
    """A rich progress bar on a terminal: sets (of those asked), matches, rate, time."""

    def __init__(self, figures: LadderFigures) -> None:
        self.figures = figures
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("sets"),
            TextColumn("{task.fields[matches]} matches"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
        )
        self.bar = Progress(*columns, console=console, transient=False)
        self.task = self.bar.add_task(
            f"ladder {figures.ladder_id}",
            total=figures.asked,  # None: a run until stopped, the bar pulses
            completed=0,
            matches=0,
            rate="",
        )
        self.bar.start()

    def update(self, played: SetPlayed) -> None:
        """Move the bar."""
        f = self.figures
        f.update(played)
        self.bar.update(self.task, completed=f.done, matches=f.played, rate=f.rate)

    def close(self) -> None:
        """Leave the bar's last state on screen."""
        self.bar.stop()


class LadderLines:
    """Plain progress lines on stderr, for logs and pipes: every few sets (a twentieth of
    those asked, or every ENDLESS_STEP sets of a run until stopped) and the last set asked."""

    def __init__(self, figures: LadderFigures) -> None:
        self.figures = figures
        asked = figures.asked
        self.step = max(1, asked // PLAIN_UPDATES) if asked is not None else ENDLESS_STEP
        self.printed = 0

    def update(self, played: SetPlayed) -> None:
        """Print a line when another step of sets is done."""
        f = self.figures
        f.update(played)
        if f.done - self.printed >= self.step or (f.asked is not None and f.done == f.asked):
            self.printed = f.done
            errors.print(f.line(), highlight=False, soft_wrap=True, markup=False)

    def close(self) -> None:
        """Nothing more: the run's last line is its summary."""


def reporter_for(figures: LadderFigures) -> LadderReporter:
    """A bar on a terminal, plain lines elsewhere (as `tournament run` chooses)."""
    return LadderBar(figures) if console.is_terminal else LadderLines(figures)
