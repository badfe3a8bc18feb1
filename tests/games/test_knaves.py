"""Knaves scenarios, one or more per rule of RULINGS §2."""

from __future__ import annotations

import pytest

from games.errors import IllegalActionError
from games.knaves import GAME, KnavesState


def new(seed: int = 1) -> KnavesState:
    return GAME.new_match(seed)


def rig(state: KnavesState, hands: list[list[str]], turned: str, leader: int) -> None:
    """Replace the deal with chosen hands (each the same length)."""
    state.hands = [list(h) for h in hands]
    state.dealt = [list(h) for h in hands]
    state.turned = turned
    state.leader = leader
    state.legal_cache = None


def play(state: KnavesState, *cards: str) -> None:
    for card in cards:
        GAME.apply(state, f"play:{card}")


def test_n1_n2_deal_17_each_and_a_public_turned_card_out_of_play() -> None:
    state = new()
    cards = [c for h in state.hands for c in h]
    assert [len(h) for h in state.hands] == [17, 17, 17]
    assert len(set(cards) | {state.turned}) == 52
    assert state.turned not in cards
    for seat in range(3):
        view = GAME.view(state, seat)
        assert view["turned"] == state.turned and view["trump"] == state.turned[1]
        assert view["hand"] == state.hands[seat]


def test_n3_dealer_left_leads_first_trick_and_winner_leads_next() -> None:
    state = new(5)
    assert GAME.to_act(state) == (state.dealer + 1) % 3
    rig(state, [["2S", "3S"], ["AS", "4S"], ["5S", "6S"]], "9H", 0)
    play(state, "2S", "AS", "5S")
    assert GAME.to_act(state) == 1


def test_n4_must_follow_suit_when_able() -> None:
    state = new()
    rig(state, [["2S", "3D"], ["4S", "AH"], ["5D", "6D"]], "9H", 0)
    play(state, "2S")
    assert [a.id for a in GAME.legal_actions(state)] == ["play:4S"]
    with pytest.raises(IllegalActionError, match="play:AH"):
        GAME.apply(state, "play:AH")


def test_kn3_void_player_may_discard_instead_of_trumping() -> None:
    state = new()
    rig(state, [["2S", "3D"], ["AH", "4D"], ["5D", "6D"]], "9H", 0)
    play(state, "2S")
    assert sorted(a.id for a in GAME.legal_actions(state)) == ["play:4D", "play:AH"]
    play(state, "4D", "5D")
    assert state.tricks[-1]["winner"] == 0


def test_kn4_trumps_may_be_led() -> None:
    state = new()
    rig(state, [["2H", "3S"], ["4S", "5S"], ["6S", "7S"]], "9H", 0)
    assert "play:2H" in [a.id for a in GAME.legal_actions(state)]


def test_n5_lowest_trump_beats_highest_led_card() -> None:
    state = new()
    rig(state, [["AS", "3D"], ["2H", "4D"], ["KS", "6D"]], "9H", 0)
    play(state, "AS", "2H", "KS")
    assert state.tricks[-1]["winner"] == 1 and state.leader == 1


def test_n5_off_suit_discard_never_wins() -> None:
    state = new()
    rig(state, [["2S", "3D"], ["AD", "4D"], ["3S", "6D"]], "9H", 0)
    play(state, "2S", "AD", "3S")
    assert state.tricks[-1]["winner"] == 2


def test_n6_capturing_jack_of_hearts_costs_four_and_each_jack_its_price() -> None:
    state = new()
    rig(state, [["JH", "JS"], ["JD", "2C"], ["AS", "3C"]], "9C", 0)
    play(state, "JH", "JD", "AS")
    # hearts led, nobody follows or trumps: the leader captures J♥ 4 and J♦ 3
    assert state.tricks[-1]["winner"] == 0
    assert state.penalties == [7, 0, 0]
    state2 = new()
    rig(state2, [["2H", "5S"], ["JH", "JC"], ["AH", "JS"]], "9D", 0)
    play(state2, "2H", "JH", "AH")
    assert state2.penalties == [0, 0, 4]
    play(state2, "JS", "5S", "JC")
    # seat 2 led JS; seat 0 follows 5S; seat 1 discards JC: JS wins, captures J♠ 1 + J♣ 2
    assert GAME.hand_records(state2)[-1]["penalties"] == [0, 0, 7]


def test_n6_deal_points_are_tricks_minus_penalties_and_may_go_negative() -> None:
    state = new()
    state.totals = [0, 0, 0]
    rig(state, [["JH"], ["JD"], ["2H"]], "9C", 0)
    play(state, "JH", "JD", "2H")
    record = GAME.hand_records(state)[-1]
    assert record["points"] == [1 - 7, 0, 0]
    assert GAME.scores(state) == [-6, 0, 0]


def test_kn2_turned_up_jack_penalises_nobody_and_sets_trump() -> None:
    state = new()
    rig(state, [["2D"], ["3D"], ["4D"]], "JH", 0)
    play(state, "2D", "3D", "4D")
    assert GAME.hand_records(state)[-1]["points"] == [0, 0, 1]
    assert GAME.hand_records(state)[-1]["turned"] == "JH"


def test_n7_dealer_moves_left_after_each_deal() -> None:
    state = new(3)
    first = state.dealer
    rig(state, [["2D"], ["3D"], ["4D"]], "9H", (first + 1) % 3)
    play(state, *[["2D", "3D", "4D"][(first + 1 + i) % 3] for i in range(3)])
    assert state.dealer == (first + 1) % 3
    assert len(state.hands[0]) == 17


def test_n8_match_ends_only_after_the_deal_reaching_20() -> None:
    state = new()
    state.totals = [19, 0, 0]
    rig(state, [["AD", "2C"], ["3D", "3C"], ["4D", "4C"]], "9H", 0)
    play(state, "AD", "3D", "4D")
    assert not GAME.is_over(state)
    play(state, "2C", "3C", "4C")
    assert GAME.is_over(state)
    assert GAME.result(state).scores == (20, 0, 1)
    assert GAME.result(state).ranks == (1, 3, 2)


def test_n8_ties_share_the_placement() -> None:
    state = new()
    state.totals = [19, 19, 0]
    rig(state, [["AD", "2C"], ["3D", "AC"], ["4D", "4C"]], "9H", 0)
    play(state, "AD", "3D", "4D", "2C", "AC", "4C")
    assert GAME.result(state).ranks == (1, 1, 3)


def test_n9_views_hold_own_hand_trump_and_plays_but_no_other_hand() -> None:
    state = new(11)
    view = GAME.view(state, 0)
    others = set(state.hands[1]) | set(state.hands[2])
    text = repr(view)
    assert not any(card in text for card in others)
    leader = GAME.to_act(state)
    assert leader is not None
    card = GAME.legal_actions(state)[0].card
    GAME.apply(state, f"play:{card}")
    assert GAME.view(state, (leader + 1) % 3)["trick"] == [card]
