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


SUITS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


@dataclass
class Trick:
    """A trick: who led, each card with the seat that played it in play order, who won
    (None: the match stopped in it) and the decisions that played it."""

    number: int
    leader: int
    plays: list[tuple[int, str]]
    winner: int | None
    steps: list[Step] = field(default_factory=list)


@dataclass
class Hand:
    """One hand, counted from 1 as the web page does: who dealt (or started), the trump, its
    tricks and other decisions in order, and when it ended its points and the match's scores."""

    number: int
    dealer: int | None = None
    starter: int | None = None
    trump: str | None = None
    events: list[Trick | Step] = field(default_factory=list)
    points: list[int] | None = None
    scores: list[int] | None = None


def by_hand(detail: MatchDetail) -> list[Hand]:
    """A stored match replayed into hands and tricks (games without tricks: decisions)."""
    match, record = detail.match, detail.match.record or {}
    game = get_game(detail.tournament.game)
    seats = len(match.seats)
    state = game.new_match(match.seed, seats, detail.tournament.options)
    actions = record.get("actions", [])
    hands = [Hand(1)]
    playing: list[Step] = []
    for step in transcript(detail):
        hand = hands[-1]
        before = game.view(state, 0)
        if not hand.events and not playing:
            hand.dealer, hand.starter = _seat(before, "dealer"), _seat(before, "starter")
        done, in_trick = len(before.get("tricks") or ()), len(before.get("trick") or ())
        game.apply(state, actions[step.index])
        if step.hand_ended is not None:
            ended = game.hand_records(state)[-1]
            finished = list(ended.get("tricks") or ())[done:]
            grew = False
        else:
            after = game.view(state, 0)
            finished = list(after.get("tricks") or ())[done:]
            grew = len(after.get("trick") or ()) > in_trick
            if grew and hand.trump is None:
                hand.trump = _trump(after)
        if finished or grew:
            playing.append(step)
        else:
            hand.events.append(step)
        for trick in finished:
            number = sum(isinstance(e, Trick) for e in hand.events) + 1
            hand.events.append(
                Trick(number, trick["leader"], _plays(trick, seats), trick["winner"], playing)
            )
            playing = []
        if step.hand_ended is not None:
            previous = hands[-2].scores if len(hands) > 1 else None
            hand.scores = list(step.scores)
            hand.points = [s - (previous[i] if previous else 0) for i, s in enumerate(step.scores)]
            hands.append(Hand(hand.number + 1))
    if playing:
        last = hands[-1]
        number = sum(isinstance(e, Trick) for e in last.events) + 1
        plays = [(s.seat, s.action.partition(":")[2] or s.action) for s in playing]
        last.events.append(Trick(number, playing[0].seat, plays, None, playing))
    if not hands[-1].events:
        hands.pop()
    return hands


def _seat(view: dict[str, Any], key: str) -> int | None:
    value = view.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _trump(view: dict[str, Any]) -> str | None:
    """The trump in words, e.g. `trump hearts (turned QH)` or `strong suit clubs`."""
    for key, words in (("trump", "trump"), ("strong_suit", "strong suit")):
        value = view.get(key)
        if isinstance(value, str) and value:
            turned = view.get("turned")
            shown = f"{words} {SUITS.get(value, value)}"
            return f"{shown} (turned {turned})" if isinstance(turned, str) and turned else shown
    return None


def _plays(trick: dict[str, Any], seats: int) -> list[tuple[int, str]]:
    if "plays" in trick:
        return [(int(p["seat"]), str(p["card"])) for p in trick["plays"]]
    leader = int(trick["leader"])
    return [((leader + i) % seats, str(card)) for i, card in enumerate(trick["cards"])]
