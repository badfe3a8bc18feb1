"""A stored match replayed through its engine into readable steps (CLI and web page)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from games.registry import get_game
from tournaments.store import MatchDetail


@dataclass
class Step:
    """One decision of a match: who acted, what (as everyone may see it), how fast, faults,
    and a hand's end."""

    index: int
    seat: int
    bot: str
    action: str
    ms: float
    faults: list[dict[str, Any]] = field(default_factory=list)
    hand_ended: int | None = None
    scores: list[int] = field(default_factory=list)


def seat_names(detail: MatchDetail) -> list[str]:
    """The bots in a match's seats, by name."""
    return [detail.bot_names.get(b, str(b)) for b in detail.match.seats]


def seat_code(record: dict[str, Any], seats: int) -> list[str | None]:
    """Per seat, the SHA-256 of the stored code that played it (None: a command or remote
    bot, or a record from before stored code)."""
    code = [c if isinstance(c, str) else None for c in record.get("code") or []]
    return (code + [None] * seats)[:seats]


def transcript(detail: MatchDetail) -> list[Step]:
    """Replay a stored match; each step carries the scores after it."""
    match, record = detail.match, detail.match.record or {}
    names = seat_names(detail)
    faults: dict[int, list[dict[str, Any]]] = {}
    for fault in record.get("faults", []):
        faults.setdefault(fault["decision"], []).append(fault)
    game = get_game(detail.tournament.game)
    state = game.new_match(match.seed, len(match.seats), detail.tournament.options)
    move_ms = record.get("move_ms", [])
    steps = []
    for i, action in enumerate(record.get("actions", [])):
        actor = game.to_act(state)
        seat = -1 if actor is None else actor
        label = game.public_label(state, action)
        before = game.hands_finished(state)
        game.apply(state, action)
        ended = before if game.hands_finished(state) > before else None
        steps.append(
            Step(
                index=i,
                seat=seat,
                bot=names[seat] if seat >= 0 else "?",
                action=label,
                ms=move_ms[i] if i < len(move_ms) else 0.0,
                faults=faults.get(i, []),
                hand_ended=ended,
                scores=game.scores(state),
            )
        )
    return steps
