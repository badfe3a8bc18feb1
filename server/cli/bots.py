"""`cardshark bot ...`: register, list, change and remove bots."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from server.bots.archive import (
    DEFAULT_CAP_BYTES,
    ArchiveError,
    ArchiveTooLargeError,
    PackedDirectory,
    mib,
    pack_directory,
)
from server.bots.house import EXAMPLES
from server.cli.common import (
    REMOTE_PORT,
    DbOption,
    JsonOption,
    command_group,
    console,
    database_name,
    fail,
    open_store,
)
from server.cli.tables import Column, WideOption, print_table
from tournaments.models import HOUSE_AUTHOR, Bot, BotArchive

CLIENTS = EXAMPLES.parents[1]

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
    author: Annotated[
        str | None,
        typer.Option(
            "--author",
            metavar="NAME",
            help="The author (`author add`) whose bot it is; default: the house author.",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a bot and print its token (shown only this once)."""
    packed = None if directory is None else packed_dir(directory, command, max_mib << 20)
    archive = None
    if packed is not None:
        archive = BotArchive(digest=packed.digest, data=packed.data, size=packed.size)
    with open_store(db, create=True) as store:
        bot, token = store.add_bot(name, command, archive, author=author)
        where = database_name(store)
    if as_json:
        shown = {"id": bot.id, "name": bot.name, "token": token, "database": where}
        print(json.dumps({**shown, "code_digest": bot.code_digest} if packed else shown))
        return
    console.print(
        f"bot [bold]{bot.name}[/] registered (id {bot.id}"
        f"{'' if author is None else ', author ' + escape(author)}), stored in {escape(where)}",
        highlight=False,
        soft_wrap=True,
    )
    if directory is not None and packed is not None:
        say_code(directory, packed)
    console.print(f"token: {token}", highlight=False, soft_wrap=True)
    console.print("Keep it safe: it is stored only as a hash and cannot be shown again.")
    if command is None:
        address = f"127.0.0.1:{REMOTE_PORT}"
        console.print(
            f"connect it with any kit ({address}: where `cardshark serve` and `tournament run` "
            "listen unless --port says otherwise); each line runs a kit's example bot, put "
            "yours in its place (clients/README.md):",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        for kit, line in connect_commands(address, token).items():
            console.print(f"  {kit}: {line}", highlight=False, soft_wrap=True, markup=False)


def connect_commands(address: str, token: str) -> dict[str, str]:
    """The command line that connects a remote bot with each kit's example bot."""
    dial = ["--server", address, "--token", token]
    python = sys.executable
    return {
        "Python": shlex.join([python, str(EXAMPLES / "random_bot.py"), *dial]),
        "Node": shlex.join(["node", str(CLIENTS / "node" / "examples" / "random_bot.js"), *dial]),
        "C++": shlex.join([str(CLIENTS / "cpp" / "build" / "random_bot"), *dial]),
        "stdio bridge": shlex.join(
            [python, "-m", "cardshark_bot.bridge", *dial, "--"]
            + ["perl", str(CLIENTS / "perl" / "random_bot.pl")]
        ),
    }


def say_code(directory: Path, packed: PackedDirectory) -> None:
    """One line for a directory stored as a bot's code."""
    console.print(
        f"code: {directory} stored, {packed.files} files, {mib(packed.size)}, "
        f"sha256 {packed.digest}",
        highlight=False,
        soft_wrap=True,
    )


@bot_app.command("update")
def bot_update(
    name: str,
    command: Annotated[
        str | None, typer.Option(help="The new command that starts the bot (managed).")
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Store this directory as the bot's code; its command runs in it."
        ),
    ] = None,
    max_mib: Annotated[
        int, typer.Option("--max-mib", min=1, help="Largest --dir archive accepted, in MiB.")
    ] = DEFAULT_CAP_BYTES >> 20,
    db: DbOption = None,
) -> None:
    """Change a bot's command or stored code; its token, ratings and history stay."""
    if command is None and directory is None:
        fail("give --command, --dir or both: what to change")
    if command is not None and not command.strip():
        fail("--command is empty: give the command that starts the bot")
    with open_store(db) as store:
        bot = store.get_bot(name)
        packed = None
        if directory is not None:
            packed = packed_dir(directory, command or bot.command, max_mib << 20)
        archive = None
        if packed is not None:
            archive = BotArchive(digest=packed.digest, data=packed.data, size=packed.size)
        bot = store.update_bot(name, command, archive)
        where = database_name(store)
    console.print(
        f"bot [bold]{bot.name}[/] updated (id {bot.id}), stored in {escape(where)}",
        highlight=False,
        soft_wrap=True,
    )
    if command is not None:
        console.print(f"command: {command}", highlight=False, soft_wrap=True, markup=False)
    if directory is not None and packed is not None:
        say_code(directory, packed)


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
def bot_list(db: DbOption = None, as_json: JsonOption = False, wide: WideOption = False) -> None:
    """List registered bots."""
    with open_store(db) as store:
        bots = store.list_bots()
        authors = store.author_names()

    def author(bot: Bot) -> str:
        return authors.get(bot.author_id or 0, HOUSE_AUTHOR)

    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": b.id,
                        "name": b.name,
                        "author": author(b),
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
    print_table(
        "Bots",
        [
            Column("id"),
            Column("name"),
            Column("author", 3),
            Column("command", wrap=True),
            Column("code", 1 if any(b.code_digest for b in bots) else 5),
            Column("created", 2),
        ],
        [
            [
                str(b.id),
                b.name,
                author(b),
                b.command or "(remote)",
                b.code_digest[:12] if b.code_digest else "",
                f"{b.created:%Y-%m-%d %H:%M}",
            ]
            for b in bots
        ],
        empty="no bots yet; `cardshark bot add NAME --command CMD` registers one",
        wide=wide,
    )


@bot_app.command("remove")
def bot_remove(name: str, db: DbOption = None) -> None:
    """Remove a bot (one with matches is retired: kept for history, hidden from rankings)."""
    with open_store(db) as store:
        how = store.remove_bot(name)
    console.print(f"bot {name} {how}")
