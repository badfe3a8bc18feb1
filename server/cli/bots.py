"""`cardshark bot ...`: register, list and remove bots."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from server.cli.common import (
    DbOption,
    JsonOption,
    command_group,
    console,
    open_store,
)

bot_app = command_group("Register, inspect and test bots.")


@bot_app.command("add")
def bot_add(
    name: str,
    command: Annotated[
        str | None, typer.Option(help="Command that starts the bot (managed).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a bot and print its token (shown only this once)."""
    with open_store(db, create=True) as store:
        bot, token = store.add_bot(name, command)
    if as_json:
        print(json.dumps({"id": bot.id, "name": bot.name, "token": token}))
        return
    console.print(f"bot [bold]{bot.name}[/] registered (id {bot.id})")
    console.print(f"token: {token}", highlight=False, soft_wrap=True)
    console.print("Keep it safe: it is stored only as a hash and cannot be shown again.")


@bot_app.command("list")
def bot_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List registered bots."""
    with open_store(db) as store:
        bots = store.list_bots()
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": b.id,
                        "name": b.name,
                        "command": b.command,
                        "created": b.created.isoformat(),
                    }
                    for b in bots
                ],
                indent=2,
            )
        )
        return
    table = Table(title="Bots")
    for column in ("id", "name", "command", "created"):
        table.add_column(column)
    for b in bots:
        table.add_row(str(b.id), b.name, b.command or "(remote)", f"{b.created:%Y-%m-%d %H:%M}")
    console.print(table)


@bot_app.command("remove")
def bot_remove(name: str, db: DbOption = None) -> None:
    """Remove a bot (one with matches is retired: kept for history, hidden from rankings)."""
    with open_store(db) as store:
        how = store.remove_bot(name)
    console.print(f"bot {name} {how}")
