"""The contract every registered game must keep, checked by random legal play over many seeds."""

from __future__ import annotations

import itertools
import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.base import Game, Option
from games.errors import BadOptionError, IllegalActionError, UnknownGameError
from games.registry import all_games, get_game
from tests.games.contract import leaves, playout

GAMES = all_games()
CASES = [(name, n) for name, game in GAMES.items() for n in game.spec.seat_counts]


def option_values(opt: Option) -> st.SearchStrategy[Any]:
    """Every allowed value of a small option; for numeric ranges, the default and the ends."""
    if isinstance(opt.allowed, range):
        picks = {opt.default, opt.allowed.start, min(opt.allowed.start + 2, opt.allowed.stop - 1)}
        return st.sampled_from(sorted(picks, key=str))
    return st.sampled_from(list(opt.allowed))


def options_for(game: Game[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Any combination of option values."""
    return st.fixed_dictionaries({o.name: option_values(o) for o in game.spec.options})


def snapshot(game: Game[Any], state: Any) -> str:
    """Everything observable about a state, to prove an illegal action changed nothing."""
    return json.dumps(
        {
            "history": state.history,
            "to_act": game.to_act(state),
            "legal": [a.id for a in game.legal_actions(state)],
            "views": [game.view(state, s) for s in range(state.seats)],
            "scores": game.scores(state),
        },
        sort_keys=True,
    )


def check_seat_cannot_see_hidden(game: Game[Any], state: Any, seat: int) -> None:
    view = game.view(state, seat)
    hidden = game.hidden_cards(state, seat)
    leaked = hidden & set(leaves(view))
    assert not leaked, f"seat {seat} sees hidden cards {sorted(leaked)}"


@pytest.mark.parametrize(("name", "seats"), CASES)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), seed=st.integers(0, 2**62), choice_seed=st.integers(0, 2**32))
def test_random_legal_play_keeps_the_contract(
    name: str, seats: int, data: st.DataObject, seed: int, choice_seed: int
) -> None:
    game = get_game(name)
    check_match(game, seed, seats, data.draw(options_for(game)), choice_seed)


def single_option_cases() -> list[tuple[str, str, object]]:
    """Every game with each option moved off its default (numeric ranges: their low end,
    where caps bite hardest; the high end only lengthens a match)."""
    cases = []
    for name, game in GAMES.items():
        for opt in game.spec.options:
            if isinstance(opt.allowed, range):
                values = {opt.allowed.start, opt.allowed.start + 1} - {opt.default}
            else:
                values = set(opt.allowed) - {opt.default}
            cases += [(name, opt.name, v) for v in sorted(values, key=str)]
    return cases


@pytest.mark.parametrize(("name", "option", "value"), single_option_cases())
def test_each_option_value_keeps_the_contract(name: str, option: str, value: object) -> None:
    """One seeded match per non-default option value, at every seat count that accepts it."""
    game = get_game(name)
    played = [check_match(game, 17, n, {option: value}, 29) for n in game.spec.seat_counts]
    assert any(played), f"no seat count accepts {option}={value!r}"


def combination_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every combination of every game's switch options (booleans and named modes); numeric
    options stay at their defaults (the single-option test moves them)."""
    cases = []
    for name, game in GAMES.items():
        switches = [o for o in game.spec.options if isinstance(o.default, bool | str)]
        for values in itertools.product(*(list(o.allowed) for o in switches)):
            cases.append((name, {o.name: v for o, v in zip(switches, values, strict=True)}))
    return cases


COMBINATIONS = combination_cases()


@pytest.mark.parametrize(
    ("name", "options"),
    COMBINATIONS,
    ids=[f"{n}-" + ",".join(f"{k}={v}" for k, v in o.items()) for n, o in COMBINATIONS],
)
def test_every_combination_of_switches_keeps_the_contract(
    name: str, options: dict[str, Any]
) -> None:
    """Every option combination that changes play, one seeded match per seat count."""
    game = get_game(name)
    played = [check_match(game, 23, n, options, 31) for n in game.spec.seat_counts]
    assert any(played), f"no seat count accepts {options}"


def check_match(
    game: Game[Any], seed: int, seats: int, options: dict[str, Any], choice_seed: int
) -> bool:
    """Play one random legal match, checking the whole contract along the way; False if the
    options are refused for this seat count."""
    try:
        game.new_match(seed, seats, options)
    except BadOptionError:
        return False  # a combination this seat count refuses, e.g. double_max below 7 players
    rng = random.Random(choice_seed ^ 0x5EED)
    steps = 0
    state = None
    shared: list[tuple[tuple[Any, ...], str]] = []  # view parts shared between views, as seen
    for state, actor in playout(game, seed, seats, options, choice_seed):
        steps += 1
        legal = game.legal_actions(state)
        ids = [a.id for a in legal]
        assert legal, "a seat is to act but has no legal action"
        assert len(set(ids)) == len(ids), f"duplicate action ids {ids}"
        for s in range(seats):
            json.dumps(game.view(state, s))
        if steps % 5 == 1:
            before = snapshot(game, state)
            universe = [i for i in game.all_action_ids(state) if i not in set(ids)]
            for bad in rng.sample(universe, min(3, len(universe))) + ["", "nonsense:zz"]:
                with pytest.raises(IllegalActionError):
                    game.apply(state, bad)
            other = (actor + 1) % seats
            with pytest.raises(IllegalActionError):
                game.apply(state, ids[0], seat=other)
            assert snapshot(game, state) == before, "an illegal action changed the state"
            views = [game.view(state, s) for s in range(seats)]
            fresh = game.clone(state)
            fresh.view_memo.clear()
            assert [game.view(fresh, s) for s in range(seats)] == views, "a shared part is stale"
            shared += [(v, json.dumps(v)) for v in views[actor].values() if type(v) is tuple]
        if steps % 7 == 3:
            seat = rng.randrange(seats)
            check_seat_cannot_see_hidden(game, state, seat)
            alt = game.resample(state, seat, random.Random(rng.random()))
            assert game.view(alt, seat) == game.view(state, seat), "view depends on hidden cards"
            assert game.to_act(alt) == actor
    assert state is not None
    assert all(json.dumps(v) == seen for v, seen in shared), "a shared view part changed later"
    assert game.is_over(state)
    assert steps <= game.decision_bound(seats, state.options)
    with pytest.raises(IllegalActionError):
        game.apply(state, "nonsense:zz")
    result = game.result(state)
    assert len(result.scores) == seats and sorted(result.ranks)[0] == 1
    for a in range(seats):
        for b in range(seats):
            if result.scores[a] > result.scores[b]:
                assert result.ranks[a] < result.ranks[b]
            if result.scores[a] == result.scores[b]:
                assert result.ranks[a] == result.ranks[b]
    again = game.replay(seed, seats, options, state.history)
    assert [game.view(again, s) for s in range(seats)] == [
        game.view(state, s) for s in range(seats)
    ]
    assert game.result(again) == result
    assert game.hand_records(again) == game.hand_records(state)
    json.dumps(game.hand_records(state))
    return True


@pytest.mark.parametrize(("name", "seats"), CASES)
def test_same_seed_same_deal_and_different_seed_different_deal(name: str, seats: int) -> None:
    game = get_game(name)
    views = [game.view(game.new_match(99, seats), s) for s in range(seats)]
    assert views == [game.view(game.new_match(99, seats), s) for s in range(seats)]
    others = [[game.view(game.new_match(k, seats), s) for s in range(seats)] for k in range(5)]
    assert any(o != views for o in others)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_bad_options_and_seats_are_refused_by_name(name: str) -> None:
    game = get_game(name)
    with pytest.raises(BadOptionError, match="no_such_option"):
        game.new_match(1, None, {"no_such_option": 1})
    with pytest.raises(BadOptionError, match="'seats'"):
        game.new_match(1, 99)
    for opt in game.spec.options:
        with pytest.raises(BadOptionError, match=opt.name) as err:
            game.new_match(1, None, {opt.name: "not-a-value"})
        assert "not-a-value" in str(err.value) and "allowed" in str(err.value)


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(UnknownGameError, match="knaves"):
        get_game("chess")


def test_every_game_documents_itself() -> None:
    from pathlib import Path

    for name, game in GAMES.items():
        doc = Path(__file__).parents[2] / "docs" / "rules" / f"{name}.md"
        assert doc.exists(), f"{name} has no {doc}"
        text = doc.read_text()
        for opt in game.spec.options:
            assert f"`{opt.name}`" in text, f"{doc} does not document option {opt.name}"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_hands_finished_counts_the_hand_records(name: str) -> None:
    game = get_game(name)
    state = game.new_match(8)
    rng = random.Random(8)
    while game.to_act(state) is not None:
        assert game.hands_finished(state) == len(game.hand_records(state))
        game.apply(state, rng.choice(game.legal_actions(state)))
    assert game.hands_finished(state) == len(game.hand_records(state)) > 0


@pytest.mark.parametrize(("name", "seats"), CASES)
def test_a_public_label_names_no_card_another_seat_cannot_see(name: str, seats: int) -> None:
    """What a replay shows every seat of a move (Game.public_label) leaks no hidden card."""
    game = get_game(name)
    for seed in range(3):
        for state, actor in playout(game, seed, seats, {}, seed):
            before = game.hands_finished(state)
            labels = {a.id: game.public_label(state, a.id) for a in game.legal_actions(state)}
            for action_id, label in labels.items():
                after = game.clone(state)
                game.apply(after, action_id)
                if game.hands_finished(after) > before:
                    continue  # a hand's end publishes its whole record (RULINGS 0.6)
                named = set(re.split(r"[:+>\s]", label))
                for seat in range(seats):
                    if seat != actor:
                        leaked = named & game.hidden_cards(after, seat)
                        assert not leaked, (
                            f"{label!r} (for {action_id!r}) shows seat {seat} {leaked}"
                        )
