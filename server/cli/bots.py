"""`cardshark bot ...`: register, list and remove bots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from server.bot_archive import (
    DEFAULT_CAP_BYTES,
    ArchiveError,
    ArchiveTooLargeError,
    PackedDirectory,
    mib,
    pack_directory,
)
from server.cli.common import (
    DbOption,
    JsonOption,
    command_group,
    console,
    fail,
    open_store,
)
from tournaments.models import BotArchive

bot_app = command_group("Register, inspect and test bots.")


@bot_app.command("add")
def bot_add(
    name: str,
    command: Annotated[
        str | None, typer.Option(help="Command that starts the bot (managed).")
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Store this directory in the database; --command runs in it, on any machine.",
        ),
    ] = None,
    max_mib: Annotated[
        int, typer.Option("--max-mib", min=1, help="Largest --dir archive accepted, in MiB.")
    ] = DEFAULT_CAP_BYTES >> 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a bot and print its token (shown only this once)."""
    packed = None if directory is None else packed_dir(directory, command, max_mib << 20)
    archive = None
    if packed is not None:
        archive = BotArchive(digest=packed.digest, data=packed.data, size=packed.size)
    with open_store(db, create=True) as store:
        bot, token = store.add_bot(name, command, archive)
    if as_json:
        shown = {"id": bot.id, "name": bot.name, "token": token}
        print(json.dumps({**shown, "code_digest": bot.code_digest} if packed else shown))
        return
    console.print(f"bot [bold]{bot.name}[/] registered (id {bot.id})")
    if packed is not None:
        console.print(
            f"code: {directory} stored, {packed.files} files, {mib(packed.size)}, "
            f"sha256 {packed.digest}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"token: {token}", highlight=False, soft_wrap=True)
    console.print("Keep it safe: it is stored only as a hash and cannot be shown again.")


def packed_dir(directory: Path, command: str | None, cap: int) -> PackedDirectory:
    """The --dir packed for storing, or one line saying why not."""
    if not command:
        fail(f"--dir {directory} needs --command: the command to run in that directory")
    try:
        return pack_directory(directory, cap)
    except ArchiveTooLargeError as exc:
        fail(f"--dir: {exc} (--max-mib raises it)")
    except ArchiveError as exc:
        fail(f"--dir: {exc}")


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
                        "code_digest": b.code_digest,
                        "created": b.created.isoformat(),
                    }
                    for b in bots
                ],
                indent=2,
            )
        )
        return
    table = Table(title="Bots")
    for column in ("id", "name", "command", "code", "created"):
        table.add_column(column)
    for b in bots:
        code = b.code_digest[:12] if b.code_digest else ""
        created = f"{b.created:%Y-%m-%d %H:%M}"
        table.add_row(str(b.id), b.name, b.command or "(remote)", code, created)
    console.print(table)


@bot_app.command("remove")
def bot_remove(name: str, db: DbOption = None) -> None:
    """Remove a bot (one with matches is retired: kept for history, hidden from rankings)."""
    with open_store(db) as store:
        how = store.remove_bot(name)
    console.print(f"bot {name} {how}")
