"""`cardshark match ...`: find, read and replay matches."""

from __future__ import annotations

import json

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
from server.transcript import seat_code, seat_names, transcript

match_app = command_group("Find and inspect matches.")


@match_app.command("show")
def match_show(match_id: int, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show a match as a readable transcript."""
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
        f"{detail.tournament.game}, seed {match.seed}, status {match.status}"
    )
    for seat, name in enumerate(names):
        played = f" (stored code sha256 {code[seat]})" if code[seat] else ""
        console.print(f"  seat {seat}: {name}{played}", highlight=False)
    for step in transcript(detail):
        who = f"seat {step.seat} {step.bot}"
        console.print(
            f"  {step.index:4d}  {who:<24} {step.action:<26} {step.ms:8.1f} ms", highlight=False
        )
        for f in step.faults:
            console.print(
                f"        [red]fault {f['kind']} (seat {f['seat']}): {f['detail']}; "
                f"played {f['fallback'] or '-'}[/]",
                highlight=False,
            )
        if step.hand_ended is not None:
            console.print(f"  [bold]hand {step.hand_ended} ended[/]: scores {step.scores}")
    if match.result:
        console.print(f"scores {match.result.get('scores')}  ranks {match.result.get('ranks')}")


@match_app.command("replay")
def match_replay(match_id: int, db: DbOption = None) -> None:
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
