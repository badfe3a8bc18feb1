"""`cardshark match ...`: find, read and replay matches."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from games.errors import GameError
from games.registry import get_game
from server.cli.common import (
    DbOption,
    JsonOption,
    command_group,
    console,
    fail,
    open_store,
)
from server.views.transcript import Hand, Step, Trick, by_hand, seat_code, seat_names, transcript
from tournaments.store import MatchDetail

match_app = command_group("Find and inspect matches.")


MatchId = Annotated[
    int, typer.Argument(metavar="ID", help="The match's id (`cardshark match list` shows them).")
]


@match_app.command("show")
def match_show(
    match_id: MatchId,
    db: DbOption = None,
    as_json: JsonOption = False,
    steps: Annotated[
        bool,
        typer.Option("--steps", help="Every decision on its own line, with its time in ms."),
    ] = False,
) -> None:
    """Show a match hand by hand: each trick's leader, cards and winner, trump, scores."""
    with open_store(db) as store:
        detail = store.match_detail(match_id)
    match, record = detail.match, detail.match.record or {}
    if as_json:
        print(
            json.dumps(
                {"id": match.id, "status": match.status, "result": match.result, "record": record},
                indent=2,
            )
        )
        return
    names = seat_names(detail)
    code = seat_code(record, len(names))
    console.print(
        f"[bold]match {match.id}[/] of tournament {match.tournament_id}: "
        f"{detail.tournament.game}, seed {match.seed}, status {match.status}",
        highlight=False,
    )
    for seat, name in enumerate(names):
        played = f" (stored code sha256 {code[seat]})" if code[seat] else ""
        console.print(f"  seat {seat}: {escape(name)}{played}", highlight=False)
    if steps:
        _print_steps(detail)
    elif hands := by_hand(detail):
        _print_hands(hands, names)
    else:
        console.print(f"no decisions recorded (the match is {match.status})", highlight=False)
    if match.result:
        scores, ranks = match.result.get("scores") or [], match.result.get("ranks") or []
        console.print(
            "result: "
            + ", ".join(
                f"{escape(n)} {_num(s)} ({_ordinal(r)})"
                for n, s, r in zip(names, scores, ranks, strict=False)
            ),
            highlight=False,
        )


def _print_hands(hands: list[Hand], names: list[str]) -> None:
    def who(seat: int | None) -> str:
        return "?" if seat is None or not 0 <= seat < len(names) else escape(names[seat])

    if any(isinstance(e, Trick) for hand in hands for e in hand.events):
        console.print(
            "each trick: its cards in play order from the leader's, → who won it", highlight=False
        )
    for hand in hands:
        about = [f"dealer {who(hand.dealer)}"] if hand.dealer is not None else []
        about += [f"{who(hand.starter)} starts"] if hand.starter is not None else []
        about += [hand.trump] if hand.trump else []
        console.print(
            f"[bold]hand {hand.number}[/]" + (f": {', '.join(about)}" if about else ""),
            highlight=False,
        )
        grid = Table.grid(padding=(0, 1), pad_edge=True)
        grid.add_column(justify="right", no_wrap=True, min_width=4)
        grid.add_column()
        for event in hand.events:
            if isinstance(event, Trick):
                plays = " · ".join(f"{who(seat)} {card}" for seat, card in event.plays)
                end = "(unfinished)" if event.winner is None else f"→ {who(event.winner)}"
                grid.add_row(f"{event.number}", f"{plays} {end}")
                for step in event.steps:
                    _fault_rows(grid, step)
            else:
                grid.add_row("", f"{who(event.seat)}: {escape(event.action)}")
                _fault_rows(grid, event)
        if hand.points is not None and hand.scores is not None:
            totals = ", ".join(
                f"{who(seat)} {points:+d} ({total})"
                for seat, (points, total) in enumerate(zip(hand.points, hand.scores, strict=True))
            )
            grid.add_row("", f"[bold]hand {hand.number} ended[/]: points (running score) {totals}")
        _print_trimmed(grid)


def _print_trimmed(grid: Table) -> None:
    """The grid without the spaces rich pads its lines with (copied text stays clean)."""
    for line in console.render_lines(grid, pad=False):
        text = Text()
        for segment in line:
            text.append(segment.text, segment.style)
        text.rstrip()
        console.print(text, highlight=False)


def _fault_rows(grid: Table, step: Step) -> None:
    for f in step.faults:
        grid.add_row("", f"[red]{_fault(f, step)}[/]")


def _fault(f: dict[str, Any], step: Step) -> str:
    return (
        f"fault {escape(str(f['kind']))} (seat {f['seat']} {escape(step.bot)}): "
        f"{escape(str(f['detail']))}; played {escape(str(f['fallback'] or '-'))}"
    )


def _print_steps(detail: MatchDetail) -> None:
    for step in transcript(detail):
        who = f"seat {step.seat} {step.bot}"
        console.print(
            f"  {step.index:4d}  {escape(who):<24} {escape(step.action):<26} {step.ms:8.1f} ms",
            highlight=False,
        )
        for f in step.faults:
            console.print(f"        [red]{_fault(f, step)}[/]", highlight=False)
        if step.hand_ended is not None:
            console.print(
                f"  [bold]hand {step.hand_ended + 1} ended[/]: scores {step.scores}",
                highlight=False,
            )


def _num(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _ordinal(k: object) -> str:
    if not isinstance(k, int):
        return str(k)
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


@match_app.command("replay")
def match_replay(match_id: MatchId, db: DbOption = None) -> None:
    """Replay a stored match through its engine and check it reaches the stored result."""
    with open_store(db) as store:
        detail = store.match_detail(match_id)
    match = detail.match
    if match.status != "finished" or not match.record or not match.result:
        fail(f"match {match_id} is {match.status}; only finished matches can be replayed")
    game = get_game(detail.tournament.game)
    actions = match.record["actions"]
    try:
        state = game.replay(match.seed, len(match.seats), detail.tournament.options, actions)
    except GameError as exc:
        fail(f"match {match_id} does not replay: {exc}")
    scores = [float(s) for s in game.result(state).scores]
    if not game.is_over(state) or scores != match.result["scores"]:
        fail(f"match {match_id} replays to {scores}, but {match.result['scores']} is stored")
    console.print(f"match {match_id}: {len(actions)} actions replay to the stored scores {scores}")
