"""What the public sees is what was published: a contract over every game's engine and the
server's own spectator, label, transcript and replay code, checked at every step of seeded
random matches.

At step t (the table after t decisions) each seat may know its own view and the hand records
published so far; the public may know only what every seat knows. So:

- a public label (`Game.public_label`, what the spectator stream, the transcript and another
  seat's replay show of a move) names no card hidden from some seat just after the move, and
  carries nothing a seat cannot tell from its own view then: two choices that leave some
  seat's view the same have the same label (this is what catches a passed number);
- the spectator stream shows those labels, whose turn it is and the scores as every seat's
  view has them, a table of only what every seat's view has (never a hand) and the record
  of a hand just ended, at least DELAY decisions behind the table; a snapshot published
  through the store for other processes is the same (`check_shown`,
  tests/server/test_live_published.py);
- a one-seat replay step is the view that seat was sent, other seats' moves by their labels,
  and names no card hidden from that seat at that step;
- the full-table replay names no card the game's hand record does not publish (Kansas City's
  upgraded faces stay hidden for ever).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from games.base import Game, MatchState
from games.registry import all_games, get_game
from server.match.live import LiveMatch
from server.views.replay import replay_json
from server.views.spectator import DELAY, Spectator
from server.views.transcript import transcript
from tournaments.models import Match, Tournament
from tournaments.store.matches import MatchDetail

# (game, seats, options, seeds): every game, at several seat counts, with the options that
# change what is hidden; one or more seeded matches each
CASES = [
    ("kansas-city", 4, {}, (1, 2)),
    ("kansas-city", 5, {}, (4,)),
    ("kansas-city", 4, {"numbers_public": False, "hands": 1}, (6,)),
    ("kill", 4, {}, (1, 2, 3)),
    ("kill", 3, {}, (4, 5)),
    ("knaves", 3, {}, (1,)),
    ("knives", 5, {}, (1,)),
    ("knives", 5, {"leaster_bank_reveal": True}, (2,)),
    ("ninja-whist", 4, {}, (1,)),
    ("ninja-whist", 6, {}, (2,)),
    ("ninja-whist", 8, {}, (3,)),
]
ALTERNATIVES = 2  # other choices, with other labels, compared with the one taken at each step
WORD = re.compile(r'[\s:;+>,"\[\]{}]+')


def names(value: Any) -> set[str]:
    """Every word of every string inside a JSON-like value (card codes are words)."""
    return set(WORD.split(json.dumps(value)))


def knowledge(game: Game[Any], state: MatchState, seat: int, records: int) -> str:
    """What seat knows at this state: its view, and any hand record published since `records`."""
    return json.dumps(
        [game.view(state, seat), game.hand_records(state)[records:]], sort_keys=True, default=list
    )


def test_the_cases_cover_every_game() -> None:
    assert {name for name, *_ in CASES} == set(all_games())


@pytest.mark.parametrize(
    ("name", "seats", "options", "seeds"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{','.join(f'{k}={v}' for k, v in c[2].items())}" for c in CASES],
)
def test_the_public_sees_only_what_every_seat_knows(
    name: str, seats: int, options: dict[str, Any], seeds: tuple[int, ...]
) -> None:
    game = get_game(name)
    for seed in seeds:
        check_match(game, seed, seats, options)


def check_match(game: Game[Any], seed: int, seats: int, options: dict[str, Any]) -> None:
    """Play one seeded random match, checking each move's label and the spectator at every
    step, then the transcript and every replay of it."""
    state = game.new_match(seed, seats, options)
    rng = random.Random(seed)
    spectator = Spectator(LiveMatch(game, seed, seats, state.options, state.history))
    cards: set[str] = set()  # every card code of the game
    labels: list[dict[str, Any]] = []  # what the public may be shown of each move
    views: list[list[dict[str, Any]]] = []  # per step, every seat's view
    hidden: list[list[set[str]]] = []  # per step, the cards each seat cannot know
    hand_of: list[int] = []  # per step, the hand in play
    ended: list[dict[str, Any] | None] = [None]  # per step, the hand its move ended
    hidden_now = [game.hidden_cards(state, s) for s in range(seats)]
    while True:
        views.append([json.loads(json.dumps(game.view(state, s))) for s in range(seats)])
        hidden.append(hidden_now)
        hand_of.append(game.hands_finished(state))
        cards |= set().union(*hidden[-1])
        spectator.advance()
        check_shown(spectator.snapshot(True, 0), len(labels), labels, views, hidden, ended)
        actor = game.to_act(state)
        if actor is None:
            break
        legal = [a.id for a in game.legal_actions(state)]
        label = {a: game.public_label(state, a) for a in legal}
        chosen = rng.choice(legal)
        others = [a for a in legal if label[a] != label[chosen]]
        records = game.hands_finished(state)
        after = {a: game.clone(state) for a in rng.sample(others, min(ALTERNATIVES, len(others)))}
        for action, other in after.items():
            game.apply(other, action)
        game.apply(state, chosen)
        finished = game.hands_finished(state) > records
        record = game.hand_records(state)[-1] if finished else None
        ended.append(
            json.loads(json.dumps({"number": records, "record": record})) if finished else None
        )
        hidden_now = [game.hidden_cards(state, s) for s in range(seats)]
        step = f"{game.spec.name} seed {seed} step {len(labels)}"
        for seat in range(seats):
            if seat == actor:
                continue
            knows = knowledge(game, state, seat, records)
            for action, other in after.items():
                assert knowledge(game, other, seat, records) != knows, (
                    f"{step}: seat {seat} cannot tell {chosen!r} from {action!r}, but the "
                    f"public is shown {label[chosen]!r} for one and {label[action]!r} for the other"
                )
            if game.hands_finished(state) == records:  # a hand's end publishes it all
                leaked = names(label[chosen]) & hidden_now[seat]
                assert not leaked, (
                    f"{step}: the label {label[chosen]!r} of {chosen!r} shows seat {seat} "
                    f"{sorted(leaked)}"
                )
        labels.append({"seat": actor, "label": label[chosen]})
    check_transcript(game, seed, seats, options, state, labels)
    check_replays(game, seed, seats, options, state, labels, views, hidden, hand_of, cards)


def check_shown(
    shown: dict[str, Any],
    table: int,
    labels: list[dict[str, Any]],
    views: list[list[dict[str, Any]]],
    hidden: list[list[set[str]]],
    ended: list[dict[str, Any] | None],
) -> None:
    """What a spectator is shown with the table `table` decisions in: per step, the moves'
    public labels, every seat's view, the cards each seat cannot know and the hand its move
    ended."""
    step = shown["step"]
    assert step <= max(0, table - DELAY), f"the spectator is at {step} with the table at {table}"
    assert shown["moves"] == labels[:step], f"step {step}: moves other than their public labels"
    for s, view in enumerate(views[step]):
        to_act = None if view["to_act"] == -1 else view["to_act"]
        assert shown["to_act"] == to_act, f"step {step}: seat {s} is not told whose turn it is"
        assert shown["scores"] == view["scores"], f"step {step}: seat {s} sees other scores"
        assert within(shown["table"], view), f"step {step}: the table has what seat {s} does not"
    assert not {"hand", "seat"} & set(shown["table"]), f"step {step}: a seat's own in the table"
    leaked = names(shown["table"]) & set().union(*hidden[step])
    assert not leaked, f"step {step}: the table shows {sorted(leaked)}, hidden from a seat"
    assert shown["hand_ended"] == ended[step], f"step {step}: not the hand record just published"
    assert set(shown) == {
        "state", "step", "to_act", "public", "scores", "first", "moves", "table", "hand_ended",
    }  # fmt: skip


def within(part: Any, whole: Any) -> bool:
    """True when every key and item of `part` is in `whole` with the same value."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and within(v, whole[k]) for k, v in part.items()
        )
    if isinstance(part, list) and isinstance(whole, list) and len(part) == len(whole):
        return all(within(p, w) for p, w in zip(part, whole, strict=True))
    return bool(part == whole)


def public_truth(
    game: Game[Any], seed: int, seats: int, options: dict[str, Any], actions: list[str]
) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]], list[list[set[str]]], list[Any]]:
    """A played match's labels, and per step every seat's view, its hidden cards and the hand
    record its move published: what `check_shown` checks a snapshot against."""
    state = game.new_match(seed, seats, options)
    labels: list[dict[str, Any]] = []
    views, hidden, ended = [], [], [None]
    for n in range(len(actions) + 1):
        views.append([json.loads(json.dumps(game.view(state, s))) for s in range(seats)])
        hidden.append([game.hidden_cards(state, s) for s in range(seats)])
        if n == len(actions):
            break
        before = game.hands_finished(state)
        labels.append({"seat": game.to_act(state), "label": game.public_label(state, actions[n])})
        game.apply(state, actions[n])
        record = game.hand_records(state)[-1] if game.hands_finished(state) > before else None
        ended.append(
            json.loads(json.dumps({"number": before, "record": record})) if record else None
        )
    return labels, views, hidden, ended


def detail_of(
    game: Game[Any], seed: int, seats: int, options: dict[str, Any], state: MatchState
) -> MatchDetail:
    """A stored match as the web page reads it, without a store."""
    result = game.result(state)
    match = Match(
        id=1,
        tournament_id=1,
        schedule_index=0,
        round=0,
        table_index=0,
        rotation=0,
        seed=seed,
        seats=list(range(seats)),
        status="finished",
        result={"scores": list(result.scores), "ranks": list(result.ranks)},
        record={"actions": list(state.history), "move_ms": [], "faults": []},
    )
    tournament = Tournament(
        id=1,
        game=game.spec.name,
        options=options,
        seats=seats,
        seed=seed,
        clock_ms=1000,
        ts_mu=25.0,
        ts_sigma=8.3,
        ts_beta=4.2,
        ts_tau=0.08,
        ts_draw_probability=0.1,
    )
    return MatchDetail(match, tournament, [], {s: f"bot{s}" for s in range(seats)})


def check_transcript(
    game: Game[Any],
    seed: int,
    seats: int,
    options: dict[str, Any],
    state: MatchState,
    labels: list[dict[str, Any]],
) -> None:
    """The transcript (CLI and web) shows every move by its public label."""
    steps = transcript(detail_of(game, seed, seats, options, state))
    assert [{"seat": s.seat, "label": s.action} for s in steps] == labels


def check_replays(
    game: Game[Any],
    seed: int,
    seats: int,
    options: dict[str, Any],
    state: MatchState,
    labels: list[dict[str, Any]],
    views: list[list[dict[str, Any]]],
    hidden: list[list[set[str]]],
    hand_of: list[int],
    cards: set[str],
) -> None:
    """Every one-seat replay holds only what its seat knew; the full table only what the
    rules publish for ever (each hand's record)."""
    detail = detail_of(game, seed, seats, options, state)
    actions = state.history
    records = json.loads(json.dumps(game.hand_records(state)))
    for seat in range(seats):
        replay = json.loads(json.dumps(replay_json(detail, seat)))
        assert len(replay["steps"]) == len(views)
        for n, step in enumerate(replay["steps"]):
            assert step["shared"] == views[n][seat] and step["own"] == []
            to_act = views[n][seat]["to_act"]
            assert step["to_act"] == (None if to_act == -1 else to_act)
            assert step["scores"] == views[n][seat]["scores"]
            move = step["move"]
            if n:
                if labels[n - 1]["seat"] == seat:
                    assert move["action"] == actions[n - 1]
                else:
                    assert move == {
                        "seat": labels[n - 1]["seat"],
                        "action": labels[n - 1]["label"],
                        "legal": None,
                        "ms": None,
                    }
            if step["hand_ended"] is not None:  # published to every seat at once
                ended = step["hand_ended"]
                assert ended["record"] == records[ended["number"]]
            shown = dict(step, move=None, hand_ended=None)  # the move: its label, checked
            leaked = names(shown) & hidden[n][seat]
            assert not leaked, f"step {n}: seat {seat}'s replay names {sorted(leaked)}"
    published = [names(r) & cards for r in records]
    replay = json.loads(json.dumps(replay_json(detail)))
    for n, step in enumerate(replay["steps"]):
        hand = min(hand_of[n], len(records) - 1)
        rest = dict(step, move=None, hand_ended=None)
        leaked = names(rest) & (cards - published[hand])
        assert not leaked, (
            f"{game.spec.name} seed {seed} step {n} (hand {hand}): the full-table replay names "
            f"{sorted(leaked)}, which the hand record keeps hidden"
        )
        if n:
            moved = min(hand_of[n - 1], len(records) - 1)
            leaked = names(step["move"]) & (cards - published[moved])
            assert not leaked, (
                f"{game.spec.name} seed {seed} step {n} (hand {moved}): the full-table replay's "
                f"move {step['move']['action']!r} names {sorted(leaked)}, which the hand record "
                "keeps hidden"
            )
