"""The cardshark command: serve, authors, bots, tournaments, rankings, matches, games, runtimes
and a demo."""

from __future__ import annotations

import os

# gRPC logs its own copy of errors we report in one line, and reads this as it loads, which
# the imports below do; GRPC_VERBOSITY=ERROR brings its lines back.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import sys
from typing import Any

import typer

from server.bots.code import default_budget
from server.cli.authors import author_app
from server.cli.bot_show import bot_show
from server.cli.bot_test import bot_test
from server.cli.bots import bot_app
from server.cli.common import errors
from server.cli.compare import compare
from server.cli.database import db_app
from server.cli.demo import demo
from server.cli.games import games_command
from server.cli.ladder import ladder_app
from server.cli.match_list import match_list
from server.cli.matches import match_app
from server.cli.rankings import rankings, ratings_app
from server.cli.runtimes import runtimes_command
from server.cli.serve import serve
from server.cli.tournament_move import tournament_move
from server.cli.tournament_show import tournament_show
from server.cli.tournaments import tournament_app
from server.cli.worker import tournament_create, worker

app = typer.Typer(
    help="cardshark: a tournament server for card-game bots.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)
bot_app.command("test")(bot_test)
bot_app.command("show")(bot_show)
tournament_app.command("show")(tournament_show)
tournament_app.command("create")(tournament_create)
tournament_app.command("move")(tournament_move)
match_app.command("list")(match_list)
app.add_typer(author_app, name="author")
app.add_typer(bot_app, name="bot")
app.add_typer(tournament_app, name="tournament")
app.add_typer(ladder_app, name="ladder")
app.add_typer(ratings_app, name="ratings")
app.add_typer(match_app, name="match")
app.add_typer(db_app, name="db")
app.command("games")(games_command)
app.command("runtimes")(runtimes_command)
app.command("rankings")(rankings)
app.command("serve")(serve)
app.command("demo")(demo)
app.command("compare")(compare)
app.command("worker")(worker)


@app.command(
    "bridge",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def bridge(ctx: typer.Context) -> None:
    """Play a bot without gRPC: cardshark bridge [--server S] [--token T] -- COMMAND...

    The bot process speaks JSON lines (protobuf's JSON mapping) on stdin/stdout.
    """
    from cardshark_bot.bridge import bridge_main

    raise typer.Exit(bridge_main(list(ctx.args), prog="cardshark bridge"))


@app.command(
    "submit",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def submit(ctx: typer.Context) -> None:
    """Submit a bot as its author: cardshark submit DIR --key-file F --name N --game G ...

    The same as the kit's `cardshark-bot submit` (its --help lists every option).
    """
    from cardshark_bot.submit import main as submit_main

    raise typer.Exit(submit_main(["submit", *ctx.args]))


def main() -> None:
    """Entry point of the cardshark command."""
    if sys.argv[1:2] == ["bridge"]:
        from cardshark_bot.bridge import bridge_main

        # argv as typed, "--" included, so the bot's own options never reach click
        raise SystemExit(bridge_main(sys.argv[2:], prog="cardshark bridge"))
    try:
        default_budget()  # a bad CARDSHARK_BOT_CACHE_BYTES: one line now, not at a bot's start
    except ValueError as exc:
        errors.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    try:
        status = command().main(prog_name="cardshark", standalone_mode=False)
    except typer.TyperException as exc:  # click's usage errors: a bad option, a bad value
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help
            print(exc.format_message())
            raise SystemExit(2) from None
        hint = ""
        context = getattr(exc, "ctx", None)
        if context is not None:
            hint = f" (see: {context.command_path} --help)"
        errors.print(
            f"error: {exc.format_message()}{hint}", markup=False, highlight=False, soft_wrap=True
        )
        raise SystemExit(2 if exc.exit_code == 2 else exc.exit_code) from None
    except typer.Abort:  # Ctrl-C outside a tournament: nothing to save
        raise SystemExit(130) from None
    raise SystemExit(status if isinstance(status, int) else 0)


def command() -> Any:
    """The click command tree, every option shown with a name (PORT), never a type (<int>)."""
    root = typer.main.get_command(app)
    _name_metavars(root)
    return root


def _no_type(ctx: Any) -> None:
    return None


def _name_metavars(node: Any) -> None:
    # typer vendors its own click, so this goes by attributes rather than click's classes.
    for param in node.params:
        if param.metavar is None:
            # Flags take no value: an empty name hides typer's "<bool>".
            flag = getattr(param, "is_flag", False)
            param.metavar = "" if flag else (param.name or "value").upper()
        if getattr(param, "param_type_name", "") == "argument":
            # typer lists an argument's type beside its name, metavar or not.
            param.display_type_rich = _no_type
    for child in getattr(node, "commands", {}).values():
        _name_metavars(child)
