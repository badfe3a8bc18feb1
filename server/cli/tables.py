"""Tables that fit the terminal: columns dropped by priority, one line instead of no rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated

import typer
from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.table import Table

from server.cli.common import console as default_console

WideOption = Annotated[
    bool,
    typer.Option("--wide", help="Show every column, however wide the terminal."),
]


# From this `drop` up, a column also goes to spare the others' cells from wrapping.
LUXURY = 4


@dataclass(frozen=True)
class Column:
    """A column: its header, alignment, whether its cells may wrap at spaces, and how soon it
    is dropped when the table is too wide (0: never; higher numbers go first)."""

    header: str
    drop: int = 0
    justify: JustifyMethod = "left"
    wrap: bool = False


@dataclass
class Fitted:
    """A table as printed, and the headers left out to fit the width."""

    table: Table
    hidden: list[str]

    @property
    def shown(self) -> set[str]:
        """The headers of the columns printed."""
        return {str(c.header) for c in self.table.columns}


def _needed(column: Column, cells: Sequence[str], wrapped: bool = True) -> int:
    texts = [column.header, *cells]
    if column.wrap and wrapped:
        return max((cell_len(word) for text in texts for word in text.split()), default=0)
    return max((cell_len(line) for text in texts for line in text.splitlines() or [""]), default=0)


def _needs(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], wrapped: bool = True
) -> list[int]:
    return [_needed(c, [row[i] for row in rows], wrapped) for i, c in enumerate(columns)]


def width_of(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> int:
    """The fewest terminal columns the table takes without cutting a cell."""
    return _total(_needs(columns, rows), range(len(columns)))


def _total(needs: Sequence[int], shown: Iterable[int]) -> int:
    # a cell's padding of one each side, and a border before each column and after the last
    return sum(needs[i] + 3 for i in shown) + 1


def fit(
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    width: int,
    wide: bool = False,
) -> Fitted:
    """The table with the fewest columns dropped (highest `drop` first, then the rightmost)
    that fits `width` without cutting a cell, nor wrapping one where dropping LUXURY columns
    is enough for that; every column when wide."""
    needs, natural = _needs(columns, rows), _needs(columns, rows, wrapped=False)
    shown = list(range(len(columns)))
    order = sorted(
        (i for i, c in enumerate(columns) if c.drop > 0),
        key=lambda i: (-columns[i].drop, -i),
    )
    hidden: list[int] = []

    def too_wide() -> bool:
        if _total(needs, shown) > width:
            return True
        return _total(natural, shown) > width and columns[order[0]].drop >= LUXURY

    while not wide and order and too_wide():
        victim = order.pop(0)
        shown.remove(victim)
        hidden.append(victim)
    table = Table(title=title)
    for i in shown:
        c = columns[i]
        table.add_column(c.header, justify=c.justify, no_wrap=not c.wrap, min_width=needs[i])
    for row in rows:
        table.add_row(*(row[i] for i in shown))
    return Fitted(table, [columns[i].header for i in sorted(hidden)])


def print_table(
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    empty: str,
    wide: bool = False,
    hint: str | None = "--wide shows them",
    out: Console | None = None,
) -> Fitted | None:
    """Print a table fitted to the console (with a line naming the hidden columns), or the
    one line `empty` when there are no rows; the fitted table, None when empty."""
    out = out or default_console
    if not rows:
        out.print(empty, highlight=False)
        return None
    fitted = fit(title, columns, rows, out.width, wide)
    needed = width_of(columns, rows)
    if wide and needed > out.width:  # as wide as it takes: the terminal wraps it, less -S not
        Console(
            file=out.file,
            width=needed,
            force_terminal=out.is_terminal,
            color_system=out.color_system,  # type: ignore[arg-type]
        ).print(fitted.table)
    else:
        out.print(fitted.table)
    if fitted.hidden and hint is not None:
        out.print(
            f"hidden to fit {out.width} columns: {', '.join(fitted.hidden)}; {hint}",
            highlight=False,
        )
    return fitted
