"""`cardshark author ...`: register the people who submit bots, list and disable them."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from server.cli.common import (
    DbOption,
    JsonOption,
    clear_errors,
    command_group,
    console,
    database_name,
    open_store,
)
from server.cli.tables import Column, WideOption, print_table
from tournaments.store import check_author_name

author_app = command_group("Register, list and disable bot authors.")

NameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The author's name.")]


@author_app.command("add")
def author_add(name: NameArgument, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Register an author and print their key (shown only this once)."""
    with clear_errors():
        check_author_name(name)  # before the database is opened, or made
    with open_store(db, create=True) as store:
        author, key = store.add_author(name)
        where = database_name(store)
    if as_json:
        print(json.dumps({"id": author.id, "name": author.name, "key": key, "database": where}))
        return
    console.print(
        f"author [bold]{escape(author.name)}[/] registered (id {author.id}), "
        f"stored in {escape(where)}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"key: {key}", highlight=False, soft_wrap=True, markup=False)
    console.print(
        "This key is shown only once: it is stored only as a hash and cannot be shown again. "
        "Hand it to the author; it authenticates them (and only them) for submissions.",
        highlight=False,
        soft_wrap=True,
    )


@author_app.command("list")
def author_list(db: DbOption = None, as_json: JsonOption = False, wide: WideOption = False) -> None:
    """List authors with their bots (the house author owns the organizer's own bots)."""
    with open_store(db) as store:
        rows = store.list_authors()
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": r.author.id,
                        "name": r.author.name,
                        "bots": r.bots,
                        "disabled": r.author.disabled,
                        "created": r.author.created.isoformat(),
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
        return
    print_table(
        "Authors",
        [
            Column("id"),
            Column("name"),
            Column("bots", justify="right"),
            Column("disabled"),
            Column("created", 2),
        ],
        [
            [
                str(r.author.id),
                r.author.name,
                str(len(r.bots)),
                "yes" if r.author.disabled else "no",
                f"{r.author.created:%Y-%m-%d %H:%M}",
            ]
            for r in rows
        ],
        empty="no authors yet; `cardshark author add NAME` registers one",
        wide=wide,
    )


@author_app.command("disable")
def author_disable(name: NameArgument, db: DbOption = None) -> None:
    """Disable an author: their key is refused and their bots enter no new tournament
    (tournaments created before play on as scheduled)."""
    with open_store(db) as store:
        changed = store.disable_author(name)
        bots = next((r.bots for r in store.list_authors() if r.author.name == name), [])
    if not changed:
        console.print(f"author {name} was already disabled", highlight=False, markup=False)
        return
    kept = f"; their bots ({', '.join(bots)}) enter no new tournament" if bots else ""
    console.print(
        f"author {name} disabled: their key is refused{kept}; tournaments created before play "
        "on as scheduled",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
