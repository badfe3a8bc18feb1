"""A stored match replayed through its engine into the replay page's JSON: every step's table.

Step n is the state after the first n actions. Its `shared` part is what every shown seat's
view has in common and `own[s]` the rest of seat s's view, so a renderer rebuilds seat s's view
as `{...shared, ...own[s]}`. With a focus seat only that seat's view is built, other seats'
actions carry their public labels and their legal actions and faults are left out: the JSON
holds exactly what the seat was sent (its views, the hand records published at hand ends, the
faults charged to it), so the page cannot show a card the seat could not know. The full table
shows every seat's cards but those whose faces the rules never publish (`Game.sealed_cards`:
Kansas City's upgraded cards), masked from their hand's deal on.
"""

from __future__ import annotations

from typing import Any

from games.base import Game, View
from games.registry import get_game
from server.views.transcript import seat_names
from tournaments.store import MatchDetail


def _split(views: list[View]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The keys equal in every view, and per view the keys that differ."""
    first = views[0]
    shared = {k: v for k, v in first.items() if all(w.get(k) == v for w in views[1:])}
    own = [{k: v for k, v in w.items() if k not in shared} for w in views]
    return shared, own


def _fault_positions(faults: list[dict[str, Any]], decisions: int) -> dict[int, list[Any]]:
    """Faults by the step that shows them: the one after the decision they were charged at."""
    at: dict[int, list[dict[str, Any]]] = {}
    for fault in faults:
        step = min(max(int(fault.get("decision", -1)) + 1, 0), decisions)
        at.setdefault(step, []).append(fault)
    return at


def replay_json(
    detail: MatchDetail, focus: int | None = None, upto: int | None = None
) -> dict[str, Any]:
    """The replay of a match for the full table (focus None) or one seat, through step
    `upto` (default: the last)."""
    match, tournament = detail.match, detail.tournament
    record = match.record or {}
    game = get_game(tournament.game)
    seats = len(match.seats)
    if focus is not None and not 0 <= focus < seats:
        raise ValueError(f"seat {focus} is not a seat of match {match.id} (0..{seats - 1})")
    actions: list[str] = list(record.get("actions", []))
    if upto is not None:
        actions = actions[: max(0, upto)]
    move_ms: list[float] = list(record.get("move_ms", []))
    faults = _fault_positions(
        [f for f in record.get("faults", []) if focus in (None, f.get("seat"))], len(actions)
    )
    sealed: dict[int, set[str]] = {}
    if focus is None:
        sealed = _sealed_by_hand(game, match.seed, seats, tournament.options, actions)
    state = game.new_match(match.seed, seats, tournament.options)
    steps: list[dict[str, Any]] = []
    move: dict[str, Any] | None = None
    hand_ended: dict[str, Any] | None = None
    for n in range(len(actions) + 1):
        actor = game.to_act(state)
        hand = sealed.get(game.hands_finished(state), set())
        if focus is None:
            shared, own = _split([game.sealed_view(state, s, hand) for s in range(seats)])
        else:
            shared, own = _split([game.view(state, focus)])
        step: dict[str, Any] = {
            "n": n,
            "to_act": actor,
            "scores": game.scores(state),
            "shared": shared,
            "own": own if focus is None else [],
            "move": move,
            "faults": faults.get(n, []),
            "hand_ended": hand_ended,
        }
        if focus is None:
            hidden = [game.hidden_cards(state, s) for s in range(seats)]
            step["unseen"] = sorted(set.intersection(*hidden))
        steps.append(step)
        if n == len(actions) or actor is None:
            break
        action = actions[n]
        move = _move(game, state, action, actor, focus, hand)
        move["ms"] = move_ms[n] if n < len(move_ms) else None
        before = game.hands_finished(state)
        game.apply(state, action)
        hand_ended = None
        if game.hands_finished(state) > before:
            hand_ended = {"number": before, "record": game.hand_records(state)[-1]}
    return {
        "match": match.id,
        "tournament": tournament.id,
        "game": game.spec.name,
        "title": game.spec.title,
        "options": tournament.options,
        "seed": match.seed,
        "status": match.status,
        "focus": focus,
        "decisions": len(record.get("actions", [])),
        "seats": _seat_rows(detail),
        "steps": steps,
    }


def _move(
    game: Game[Any], state: Any, action: str, actor: int, focus: int | None, hand: set[str]
) -> dict[str, Any]:
    """A step's move as the replay's viewer may see it: the full table sees it with the
    hand's sealed cards masked, the acting seat its own move, another seat its public label."""
    legal: list[str] | None
    if focus is None:
        shown = game.sealed_action(action, hand)
        legal = [game.sealed_action(a.id, hand) for a in game.legal_actions(state)]
    elif focus == actor:
        shown, legal = action, [a.id for a in game.legal_actions(state)]
    else:
        shown, legal = game.public_label(state, action), None
    return {"seat": actor, "action": shown, "legal": legal}


def _seat_rows(detail: MatchDetail) -> list[dict[str, Any]]:
    """Each seat's bot and its result, with its faults counted by kind (counts and kinds only:
    public on the match's page for every seat, even in one seat's view, whose JSON carries
    only that seat's own faults in full)."""
    record, result = detail.match.record or {}, detail.match.result or {}
    names = seat_names(detail)
    kinds: list[dict[str, int]] = [{} for _ in names]
    for fault in record.get("faults", []):
        seat = fault.get("seat", -1)
        if isinstance(seat, int) and 0 <= seat < len(kinds):
            kind = str(fault.get("kind", "fault"))
            kinds[seat][kind] = kinds[seat].get(kind, 0) + 1
    return [
        {
            "seat": s,
            "bot": names[s],
            "score": _at(result.get("scores"), s),
            "rank": _at(result.get("ranks"), s),
            "forfeited": bool(_at(record.get("forfeited"), s)),
            "faults": kinds[s],
        }
        for s in range(len(detail.match.seats))
    ]


def _sealed_by_hand(
    game: Game[Any], seed: int, seats: int, options: dict[str, Any], actions: list[str]
) -> dict[int, set[str]]:
    """Per hand, every card the rules keep sealed at any time in it: the full-table replay
    masks them from the hand's deal on (a face shown before it is sealed would give it away)."""
    state = game.new_match(seed, seats, options)
    sealed: dict[int, set[str]] = {}
    for action in [*actions, None]:
        sealed.setdefault(game.hands_finished(state), set()).update(game.sealed_cards(state))
        if action is None or game.to_act(state) is None:
            break
        game.apply(state, action)
    return sealed


def _at(values: object, index: int) -> Any:
    """values[index] for a stored list, else None."""
    if isinstance(values, list) and index < len(values):
        return values[index]
    return None
