"""Kill scenarios, one or more per rule and ruling of RULINGS §3 (L1-L13, KL1-KL22)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest

from games.errors import BadOptionError, IllegalActionError
from games.kill import GAME, KillState
from games.kill_cards import CARDS, JOKER, NONE, TRIO, VALUE, WIN, classify, sort_cards
from games.kill_infer import DECK, USED, code_of
from tests.games.contract import leaves

ALL = Counter([*CARDS, JOKER, JOKER])


def new(seats: int = 4, seed: int = 1, **options: Any) -> KillState:
    return GAME.new_match(seed, seats, options)


def rig(
    state: KillState,
    hands: list[list[str]],
    top: tuple[str, ...] = (),
    turn: int = 0,
    first_turn: bool = False,
) -> KillState:
    """Replace the round in progress: the given 4-card hands, the deck starting with `top`
    (the rest of the 54 cards below it), empty used pile, seat `turn` to start a turn."""
    n = state.seats
    placed = Counter(c for h in hands for c in h) + Counter(top)
    assert all(ALL[c] >= k for c, k in placed.items()), placed
    rest = ALL - placed
    deck = list(top) + sorted(rest.elements())
    state.hands = [list(h) for h in hands]
    state.deal = [list(h) for h in hands]
    state.deck = deck[::-1]
    state.deck0 = deck
    state.used = []
    state.out = [[] for _ in range(n)]
    state.log = [
        ("deal", q, "", tuple(hands[q][:3]), -1, hands[q][3], (q,), 0, False, 0) for q in range(n)
    ]
    state.active = [True] * n
    state.immune = [False] * n
    state.had_turn = [True] * n
    state.round_points = [0] * n
    state.phase, state.turn, state.drawn, state.recipient, state.given = 0, turn, "", -1, ""
    state.turns = 1 if first_turn else 2
    state.draw_only = first_turn
    state.knowledge = None
    state.legal_cache = None
    return state


def ids(state: KillState) -> list[str]:
    return [a.id for a in GAME.legal_actions(state)]


def play(state: KillState, *actions: str) -> None:
    for action in actions:
        GAME.apply(state, action)


def events(state: KillState, seat: int, kind: str) -> list[dict[str, Any]]:
    return [e for e in GAME.view(state, seat)["events"] if e["kind"] == kind]


LOW = [["4H", "5H", "6H", "8C"], ["4D", "5D", "6D", "8S"], ["4C", "5C", "6C", "9H"]]
LOW4 = [*LOW, ["4S", "5S", "6S", "9D"]]


# --- L1, L2, KL18: cards and hand types ------------------------------------------------


def test_l1_deck_has_54_cards_with_two_identical_jokers_and_values_ace_1_to_king_13() -> None:
    state = new()
    held = [c for h in state.hands for c in h]
    assert Counter(held + state.deck) == ALL
    assert VALUE["AH"] == 1 and VALUE["TS"] == 10 and VALUE["KD"] == 13


def test_l2_winning_hand_may_mix_suits_of_one_colour() -> None:
    assert classify(["TH", "JD", "QH", "KD"]) == WIN
    assert classify(["TS", "JC", "QC", "KS"]) == WIN
    assert classify(["TH", "JD", "QS", "KD"]) == TRIO  # one black card among reds


def test_l2_winning_hand_with_one_and_with_two_jokers() -> None:
    assert classify(["TS", "JC", "QS", JOKER]) == WIN
    assert classify(["TS", "QC", JOKER, JOKER]) == WIN  # the seed text's example
    assert classify([JOKER, JOKER, "KD", "JH"]) == WIN


def test_l2_repeated_value_or_low_card_is_not_a_win() -> None:
    assert classify(["TH", "TD", "QH", "KH"]) == TRIO
    assert classify(["9H", "JH", "QH", "KH"]) == TRIO
    assert classify(["9H", "8H", "QH", "KH"]) == NONE


def test_l2_trios_with_one_and_with_two_jokers() -> None:
    assert classify(["TH", JOKER, "QD", "5C"]) == TRIO
    assert classify([JOKER, JOKER, "TS", "5C"]) == TRIO
    assert classify([JOKER, JOKER, "5C", "6C"]) == NONE
    assert classify(["TH", "JS", "5C", JOKER]) == NONE  # no three of one colour


def test_kl18_a_winning_hand_is_not_a_trio() -> None:
    state = rig(new(), [["TH", "JH", "QH", "KH"], *LOW4[1:]])
    assert "show_win" in ids(state) and "show_trio" not in ids(state)


def winning_shape(cards: tuple[str, ...]) -> bool:
    """L2 as written: every non-Joker is a 10, J, Q or K, all of one colour and distinct values."""
    plain = [c for c in cards if c != JOKER]
    colours = {c[1] in "HD" for c in plain}
    values = [VALUE[c] for c in plain]
    return all(v >= 10 for v in values) and len(colours) <= 1 and len(set(values)) == len(values)


def test_l2_classify_agrees_with_the_rule_on_every_hand() -> None:
    codes = [*CARDS, JOKER, JOKER]
    for hand in itertools.combinations(codes, 4):
        if winning_shape(hand):
            expected = WIN
        elif any(winning_shape(hand[:i] + hand[i + 1 :]) for i in range(4)):
            expected = TRIO
        else:
            expected = NONE
        rotated = [*hand[1:], hand[0]]
        assert classify(list(hand)) == classify(rotated[::-1]) == expected, hand


def test_kl10_only_true_wins_and_trios_are_offered() -> None:
    state = rig(new(), [["TH", "JH", "QS", "7D"], *LOW4[1:]])
    assert "show_win" not in ids(state) and "show_trio" not in ids(state)
    state = rig(new(), [["TH", "JH", "QD", "7D"], *LOW4[1:]])
    assert "show_trio" in ids(state) and "show_win" not in ids(state)


# --- L3, KL1, KL2, KL21: round setup -----------------------------------------------------


def test_l3_kl1_a23_by_turn_order_from_starter_and_one_private_card() -> None:
    for seed in range(6):
        state = new(seed=seed)
        start = state.starter
        for j, suit in enumerate("HDCS"):
            seat = (start + j) % 4
            assert state.hands[seat][:3] == ["A" + suit, "2" + suit, "3" + suit]
            assert len(state.hands[seat]) == 4
        assert len(state.deck) == 38 and state.used == []
        assert GAME.view(state, 0)["deck_size"] == 38
    assert len({new(seed=s).starter for s in range(20)}) == 4  # L3: random first starter


def test_l3_starting_cards_are_public_and_the_fourth_card_private() -> None:
    state = new(seed=3)
    for seat in range(4):
        deals = events(state, seat, "deal")
        assert len(deals) == 4
        for e in deals:
            assert e["cards"] == state.hands[e["seat"]][:3]
            assert e["secret"] == (state.hands[seat][3] if e["seat"] == seat else "")


def test_kl1_fixed_suits_option_gives_seat_i_suit_i_every_round() -> None:
    state = new(seed=2, fixed_suits=True)
    for round_ in range(3):
        for seat, suit in enumerate("HDCS"):
            assert state.hands[seat][:3] == ["A" + suit, "2" + suit, "3" + suit], round_
        finish_round_by_true_win(state)


def finish_round_by_true_win(state: KillState) -> None:
    """The seat to act shows a (planted) winning hand: +10, round over."""
    seat = state.turn
    rig_hands = [list(h) for h in state.hands]
    taken = {c for q, h in enumerate(rig_hands) if q != seat for c in h}
    wins = [[r + s for r in "TJQK"] for s in "HDCS"]
    rig_hands[seat] = next(w for w in wins if not taken & set(w))
    rig(state, rig_hands, turn=seat)
    play(state, "show_win")


def test_kl2_next_starter_is_one_seat_right_in_both_suit_modes() -> None:
    for fixed in (False, True):
        state = new(seed=5, fixed_suits=fixed)
        starters = [state.starter]
        for _ in range(4):
            finish_round_by_true_win(state)
            starters.append(state.starter)
        assert starters == [(starters[0] - k) % 4 for k in range(5)]
        assert GAME.to_act(state) == state.starter
        if not fixed:
            assert state.hands[state.starter][:3] == ["AH", "2H", "3H"]


def test_kl21_three_players_use_hearts_diamonds_clubs_and_spades_a3_stay_in_the_deck() -> None:
    state = new(3, seed=4)
    assert len(state.deck) == 42
    starts = sorted(c for h in state.hands for c in h[:3])
    assert starts == sorted(r + s for s in "HDC" for r in "A23")
    held = {c for h in state.hands for c in h}
    assert {"AS", "2S", "3S"} <= set(state.deck) | held


# --- L4, L5, KL3: turns and turn-start options -------------------------------------------


def test_l5_kl3_only_the_starter_first_turn_is_draw_only() -> None:
    state = new(seed=7)
    start = state.starter
    assert ids(state) == ["draw"]
    assert GAME.view(state, start)["draw_only"]
    play(state, "draw", "decline")
    if GAME.to_act(state) == start:
        play(state, "continue")
    nxt = (start + 1) % 4
    assert GAME.to_act(state) == nxt
    assert "fold" in ids(state) and f"kill:{start}" in ids(state)


def test_kl3_first_orbit_option_makes_everyone_first_turn_draw_only() -> None:
    state = new(seed=7, first_orbit_draw_only=True)
    for _ in range(4):
        assert ids(state) == ["draw"]
        rig_seat = state.turn
        play(state, "draw", "decline")
        if GAME.to_act(state) == rig_seat:
            play(state, "continue")
    assert ids(state)[0] == "draw" and "fold" in ids(state)


def test_l5_turn_start_options_list() -> None:
    state = rig(new(), LOW4, turn=1)
    assert ids(state) == [
        "draw",
        "kill:0",
        "kill:2",
        "kill:3",
        "claim_joker:0",
        "claim_joker:2",
        "claim_joker:3",
        "fold",
    ]


def test_l4_turns_run_clockwise_over_active_players_only() -> None:
    state = rig(new(), LOW4, turn=0)
    play(state, "draw", "decline")
    assert GAME.to_act(state) == 1
    play(state, "fold")
    assert GAME.to_act(state) == 2
    play(state, "draw", "decline", "draw", "decline")
    assert GAME.to_act(state) == 0
    play(state, "draw", "decline")
    assert GAME.to_act(state) == 2  # seat 1 has exited


# --- L5 SHOW_WIN, KILL, SHOW_TRIO, FOLD; L8, L11 ------------------------------------------


def test_l5_l11_true_win_scores_10_and_ends_the_round() -> None:
    state = new(max_rounds=3)
    rig(state, [["TD", "JH", "KH", "QD"], *LOW4[1:]], turn=0)
    play(state, "show_win")
    record = GAME.hand_records(state)[-1]
    assert record["points"] == [10, 0, 0, 0] and record["end"] == "show_win"
    assert GAME.scores(state) == [10, 0, 0, 0]
    assert state.round_no == 1


def test_l5_l11_successful_kill_scores_11_and_ends_the_round() -> None:
    state = new(max_rounds=3)
    rig(state, [LOW4[0], ["TS", "JC", "QS", JOKER], *LOW4[2:]], turn=0)
    play(state, "kill:1")
    record = GAME.hand_records(state)[-1]
    assert record["points"] == [11, 0, 0, 0] and record["end"] == "kill"
    kill = [e for e in record["events"] if e["kind"] == "kill"][0]
    assert kill["success"] and kill["target"] == 1 and kill["cards"] == ["TS", "JC", "QS", JOKER]


def test_l5_kl22_failed_kill_costs_4_exits_the_killer_and_exposes_the_target() -> None:
    state = rig(new(), LOW4, turn=0)
    play(state, "kill:2")
    assert GAME.scores(state) == [-4, 0, 0, 0]
    assert state.active == [False, True, True, True]
    view = GAME.view(state, 3)
    kill = [e for e in view["events"] if e["kind"] == "kill"][0]
    assert kill["cards"] == LOW4[2] and not kill["success"] and kill["points"] == -4
    assert view["out"][0]["cards"] == sort_cards(LOW4[0])
    assert GAME.to_act(state) == 1
    assert "kill:2" in ids(state) and "kill:0" not in ids(state)  # target stays active


def test_l5_l8_show_trio_scores_3_and_the_hand_is_set_aside_face_up() -> None:
    state = rig(new(), [["TH", "JH", "QD", "7D"], *LOW4[1:]], turn=0)
    play(state, "show_trio")
    assert GAME.scores(state) == [3, 0, 0, 0]
    assert not state.active[0] and state.hands[0] == []
    assert GAME.view(state, 2)["out"][0]["cards"] == sort_cards(["TH", "JH", "QD", "7D"])
    assert GAME.to_act(state) == 1


def test_l5_fold_scores_1_and_reveals_the_hand() -> None:
    state = rig(new(), LOW4, turn=2)
    play(state, "fold")
    assert GAME.scores(state) == [0, 0, 1, 0]
    fold = events(state, 0, "fold")[0]
    assert fold["cards"] == LOW4[2] and fold["points"] == 1


def test_l11_kl15_point_table() -> None:
    from games import kill

    assert (kill.KILL_WIN, kill.TRUE_WIN, kill.SURVIVOR, kill.CLAIMED_WIN) == (11, 10, 6, 5)
    assert (kill.TRUE_TRIO, kill.CLAIMED_TRIO, kill.FOLDED, kill.KILL_FAIL) == (3, 2, 1, -4)


# --- L6: drawing and exchanging ---------------------------------------------------------


def test_l6_drawn_card_is_shown_to_all() -> None:
    state = rig(new(), LOW4, top=("TD",), turn=0)
    play(state, "draw")
    for seat in range(4):
        view = GAME.view(state, seat)
        assert view["drawn"] == "TD" and view["phase"] == "drawn"
        assert events(state, seat, "draw")[-1]["card"] == "TD"
    assert GAME.view(state, 1)["deck_size"] == 37


def test_l6_decline_puts_the_card_on_the_used_pile_and_ends_the_turn() -> None:
    state = rig(new(), LOW4, top=("TD",), turn=0)
    play(state, "draw", "decline")
    assert state.used == ["TD"] and GAME.view(state, 3)["used_size"] == 1
    assert GAME.to_act(state) == 1 and "continue" not in ids(state)


def test_l6_swap_same_suit_same_value_or_adjacent_value() -> None:
    hands = [["2D", "7C", "9S", "KH"], *LOW4[1:]]
    hands[1] = ["4D", "5D", "6D", "TS"]
    state = rig(new(), hands, top=("TD",), turn=0)
    play(state, "draw")
    assert sorted(ids(state)) == ["decline", "swap:2D", "swap:9S"]
    state = rig(new(), [["2D", "7C", "TS", "KH"], *LOW4[1:]], top=("TD",), turn=0)
    play(state, "draw")
    assert sorted(ids(state)) == ["decline", "swap:2D", "swap:TS"]


def test_kl4_no_king_ace_wrap() -> None:
    state = rig(new(), [["KH", "2D", "7C", "9C"], *LOW4[1:]], top=("AS",), turn=0)
    play(state, "draw")
    assert sorted(ids(state)) == ["decline", "swap:2D"]


def test_l6_swap_any_card_for_a_drawn_joker_and_a_held_joker_for_anything() -> None:
    state = rig(new(), [["KS", "2D", "9C", JOKER], *LOW4[1:]], top=(JOKER,), turn=0)
    play(state, "draw")
    assert sorted(ids(state)) == ["decline", "swap:2D", "swap:9C", "swap:JK", "swap:KS"]
    state = rig(new(), [["KS", "2D", "9C", JOKER], *LOW4[1:]], top=("6H",), turn=0)
    play(state, "draw")
    assert sorted(ids(state)) == ["decline", "swap:JK"]


def test_l6_l13_swap_takes_the_card_and_hides_the_replaced_one() -> None:
    state = rig(new(), [["2D", "7C", "KH", "9S"], *LOW4[1:]], top=("TD",), turn=0)
    play(state, "draw", "swap:9S")
    assert sorted(state.hands[0]) == sorted(["2D", "7C", "TD", "KH"])
    assert state.used == ["9S"]
    assert events(state, 0, "swap")[0]["secret"] == "9S"
    for seat in (1, 2, 3):
        swap = events(state, seat, "swap")[0]
        assert swap["card"] == "TD" and swap["secret"] == ""
        assert "9S" not in set(leaves(GAME.view(state, seat)))


def test_l6_two_card_offers_each_split_to_each_active_opponent() -> None:
    state = rig(new(), [["5H", "7C", "2D", "9S"], *LOW4[1:]], top=("QH",), turn=0)
    play(state, "draw")
    twos = sorted(i for i in ids(state) if i.startswith("two:"))
    assert twos == sorted(
        f"two:{g}+{k}>p{p}" for g, k in (("5H", "7C"), ("7C", "5H")) for p in (1, 2, 3)
    )
    action = next(a for a in GAME.legal_actions(state) if a.id == "two:5H+7C>p2")
    assert (action.kind, action.card, action.cards, action.seat) == ("two", "5H", ("5H", "7C"), 2)


def test_l6_kl6_kl7_kl9_two_card_hidden_gift_and_recipient_discards_an_old_card() -> None:
    hands = [["5H", "7C", "2D", "9S"], *LOW4[1:]]
    state = rig(new(), hands, top=("QH",), turn=0)
    play(state, "draw", "two:5H+7C>p2")
    assert sorted(state.hands[0]) == sorted(["7C", "2D", "9S", "QH"])
    assert GAME.to_act(state) == 2 and len(state.hands[2]) == 5
    assert sorted(ids(state)) == sorted(f"discard:{c}" for c in LOW4[2])  # not the 5H
    for seat in range(4):
        two = events(state, seat, "two")[0]
        assert two["cards"] == ["5H", "7C"] and two["target"] == 2 and two["card"] == "QH"
        assert two["secret"] == ("5H" if seat in (0, 2) else "")
    for seat in (1, 3):
        assert "5H" not in GAME.hidden_cards(state, seat)  # shown as one of the pair
    play(state, "discard:9H")  # the recipient's private 4th card
    assert "5H" in state.hands[2] and "9H" in state.used
    assert events(state, 2, "discard")[0]["secret"] == "9H"
    for seat in (0, 1, 3):
        assert events(state, seat, "discard")[0]["secret"] == ""
        assert "9H" in GAME.hidden_cards(state, seat)
        assert "9H" not in set(leaves(GAME.view(state, seat)))
    assert GAME.to_act(state) == 1


def test_kl5_a_joker_gives_no_value_in_the_two_card_method() -> None:
    state = rig(new(), [[JOKER, "7C", "2D", "9S"], *LOW4[1:]], top=("QH",), turn=0)
    play(state, "draw")
    assert not [i for i in ids(state) if i.startswith("two:")]
    state = rig(new(), [["5H", "7C", "2D", "9S"], *LOW4[1:]], top=(JOKER,), turn=0)
    play(state, "draw")
    assert not [i for i in ids(state) if i.startswith("two:")]


def test_kl8_immune_player_may_receive_but_exited_player_may_not() -> None:
    state = rig(new(), [["5H", "7C", "2D", "9S"], *LOW4[1:]], top=("QH",), turn=0)
    state.immune[1] = True
    state.active[3] = False
    state.out[3], state.hands[3] = state.hands[3], []
    play(state, "draw")
    targets = {i.split(">p")[1] for i in ids(state) if i.startswith("two:")}
    assert targets == {"1", "2"}


def test_l6_two_card_pair_may_have_equal_values() -> None:
    state = rig(new(), [["3H", "3D", "8C", "9S"], *LOW4[1:]], top=("6H",), turn=0)
    play(state, "draw")
    assert "two:3H+3D>p1" in ids(state) and "two:3D+3H>p1" in ids(state)


def test_l6_two_card_can_ruin_the_recipients_winning_hand() -> None:
    hands = [["5H", "7C", "2D", "9S"], ["TS", "JC", "QS", "KC"], *LOW4[2:]]
    state = rig(new(), hands, top=("QH",), turn=0)
    play(state, "draw", "two:7C+5H>p1")
    assert GAME.to_act(state) == 1
    play(state, "discard:KC")
    assert classify(state.hands[1]) == TRIO


# --- L7, KL11: post-move claims ----------------------------------------------------------


def test_l7_kl11_claim_win_after_a_decline_scores_5() -> None:
    state = new(max_rounds=2)
    rig(state, [["TH", "JH", "QH", "KH"], *LOW4[1:]], top=("2S",), turn=0)
    play(state, "draw", "decline")
    assert ids(state) == ["claim_win", "continue"]
    play(state, "claim_win")
    assert GAME.hand_records(state)[-1]["points"] == [5, 0, 0, 0]
    assert GAME.hand_records(state)[-1]["end"] == "claim_win"


def test_l7_claim_trio_after_a_swap_scores_2_and_exits() -> None:
    state = rig(new(), [["TH", "JH", "7D", "KS"], *LOW4[1:]], top=("QD",), turn=0)
    play(state, "draw", "swap:KS")
    assert ids(state) == ["claim_trio", "continue"]
    play(state, "claim_trio")
    assert GAME.scores(state) == [2, 0, 0, 0] and not state.active[0]
    assert GAME.to_act(state) == 1


def test_l7_continue_keeps_the_hand_and_ends_the_turn() -> None:
    state = rig(new(), [["TH", "JH", "QH", "9S"], *LOW4[1:]], top=("2C",), turn=0)
    play(state, "draw", "decline")
    assert ids(state) == ["claim_trio", "continue"]
    play(state, "continue")
    assert GAME.scores(state) == [0, 0, 0, 0]
    assert GAME.to_act(state) == 1 and state.active[0]
    assert sorted(state.hands[0]) == sorted(["TH", "JH", "QH", "9S"])


def test_l7_no_continue_asked_without_a_win_or_trio() -> None:
    state = rig(new(), LOW4, top=("2S",), turn=0)
    play(state, "draw", "decline")
    assert GAME.to_act(state) == 1 and "continue" not in ids(state)


def test_l7_after_a_two_card_the_actor_claims_once_the_recipient_has_discarded() -> None:
    state = rig(new(), [["TH", "JH", "3C", "9C"], *LOW4[1:]], top=("QH",), turn=0)
    play(state, "draw", "two:3C+9C>p3")
    assert GAME.to_act(state) == 3
    play(state, "discard:4S")
    assert GAME.to_act(state) == 0 and ids(state) == ["claim_trio", "continue"]


# --- L5 CLAIM_JOKER, KL12, KL13, KL14 ------------------------------------------------------


def test_l5_claim_joker_success_transfers_publicly_and_the_giver_redraws_privately() -> None:
    hands = [["TH", "JH", "QH", "7D"], ["4D", "5D", JOKER, "8S"], *LOW4[2:]]
    state = rig(new(), hands, top=("9C",), turn=0)
    play(state, "claim_joker:1")
    assert GAME.to_act(state) == 0
    assert sorted(state.hands[1]) == sorted(["4D", "5D", "9C", "8S"])
    for seat in range(4):
        claim = events(state, seat, "claim_joker")[0]
        assert claim["success"] and claim["card"] == JOKER and claim["target"] == 1
        assert claim["cards"] == ["TH", "JH", "QH", "7D"]  # the claimer's hand is revealed
        redraw = events(state, seat, "joker_draw")[0]
        assert redraw["seat"] == 1 and redraw["secret"] == ("9C" if seat == 1 else "")
    assert "9C" in GAME.hidden_cards(state, 2)
    # KL12: any of the 5 cards may be discarded, the new Joker included
    assert sorted(ids(state)) == sorted(f"discard:{c}" for c in ["TH", "JH", "QH", "7D", JOKER])


def test_l5_kl13_claimer_has_no_post_move_claim_and_is_immune_until_his_next_turn() -> None:
    hands = [["TH", "JH", "QH", "7D"], ["4D", "5D", JOKER, "8S"], *LOW4[2:]]
    state = rig(new(), hands, top=("9C",), turn=0)
    play(state, "claim_joker:1", "discard:7D")
    assert classify(state.hands[0]) == WIN
    assert GAME.to_act(state) == 1  # no claim_win after the claim
    assert GAME.view(state, 2)["immune"] == [True, False, False, False]
    for _ in range(3):
        assert "kill:0" not in ids(state) and "claim_joker:0" in ids(state)
        play(state, "draw", "decline")
    assert GAME.to_act(state) == 0 and not state.immune[0]
    play(state, "show_win")
    assert GAME.scores(state)[0] == 10


def test_kl13_immunity_ends_when_the_claimers_next_turn_begins() -> None:
    hands = [["TH", "JH", "QH", "7D"], ["4D", "5D", JOKER, "8S"], *LOW4[2:]]
    state = rig(new(), hands, top=("9C", "2S", "2H", "2C", "7S"), turn=0)
    play(state, "claim_joker:1", "discard:7D")
    play(state, "draw", "decline", "draw", "decline", "draw", "decline")
    play(state, "draw", "decline")
    assert GAME.to_act(state) == 0  # seat 0 won: W after the decline
    play(state, "continue")
    assert "kill:0" in ids(state)


def test_kl12_a_player_with_two_jokers_gives_one_and_the_count_stays_hidden() -> None:
    hands = [["TH", "JH", "QH", "7D"], [JOKER, "5D", JOKER, "8S"], *LOW4[2:]]
    state = rig(new(), hands, top=("9C",), turn=0)
    play(state, "claim_joker:1")
    assert state.hands[1].count(JOKER) == 1 and state.hands[0].count(JOKER) == 1
    view = GAME.view(state, 2)
    assert view["hand_sizes"] == [5, 4, 4, 4]
    assert JOKER not in GAME.hidden_cards(state, 2)  # the code is public: nothing to scan


def test_l5_kl14_failed_claim_reveals_the_claimer_and_ends_the_turn() -> None:
    hands = [["TH", "JH", "QH", "7D"], *LOW4[1:]]
    state = rig(new(), hands, top=("KH",), turn=0)
    play(state, "claim_joker:2")
    assert GAME.to_act(state) == 1 and not state.immune[0]
    claim = events(state, 3, "claim_joker")[0]
    assert not claim["success"] and claim["card"] == "" and claim["cards"] == hands[0]
    assert "kill:0" in ids(state)


# --- L8, L9, KL16, KL17, KL19: exits, survivor, used pile ----------------------------------


def test_l9_kl19_survivor_wins_6_as_soon_as_one_player_remains() -> None:
    state = new(3, max_rounds=1)
    rig(state, LOW, turn=0)
    play(state, "fold", "fold")
    assert GAME.is_over(state)
    record = GAME.hand_records(state)[-1]
    assert record["points"] == [1, 1, 6] and record["end"] == "survivor" and record["winner"] == 2


def test_l9_survivor_after_a_failed_kill() -> None:
    state = new(3, max_rounds=2)
    rig(state, LOW, turn=1)
    play(state, "fold", "kill:0")
    record = GAME.hand_records(state)[-1]
    assert record["points"] == [6, 1, -4]
    assert [e["kind"] for e in record["events"]][-3:] == ["kill", "exit", "survivor"]


def test_kl17_used_pile_is_reshuffled_when_a_draw_finds_the_deck_empty() -> None:
    state = rig(new(), LOW4, turn=0)
    rest = list(state.deck)
    state.deck, state.used = rest[-1:], rest[:-1]
    play(state, "draw", "decline")
    assert state.deck == [] and len(state.used) == 38
    play(state, "draw")
    assert len(state.deck) == 37 and state.used == []
    shuffle = events(state, 2, "reshuffle")[0]
    assert shuffle["count"] == 38
    assert GAME.view(state, 2)["deck_size"] == 37


def test_kl17_the_joker_givers_redraw_also_reshuffles() -> None:
    hands = [["TH", "JH", "QH", "7D"], ["4D", "5D", JOKER, "8S"], *LOW4[2:]]
    state = rig(new(), hands, turn=0)
    state.used, state.deck = list(state.deck), []
    play(state, "claim_joker:1")
    kinds = [e["kind"] for e in GAME.view(state, 0)["events"]]
    assert kinds[-3:] == ["claim_joker", "reshuffle", "joker_draw"]
    assert len(state.deck) == 37 and len(state.hands[1]) == 4


def test_l8_kl16_exited_hands_are_never_recycled() -> None:
    state = rig(new(), LOW4, turn=1)
    play(state, "fold")
    rest = list(state.deck)
    state.deck, state.used = [], rest
    play(state, "draw")
    pile = [*state.deck, state.drawn]
    assert not set(pile) & set(LOW4[1]) and len(pile) == 38
    assert sorted(GAME.view(state, 0)["out"][1]["cards"]) == sorted(LOW4[1])


# --- L10, KL20, L12: caps and match end ----------------------------------------------------


def test_l10_kl20_turn_cap_ends_the_round_without_more_points_and_counts_as_a_round() -> None:
    state = new(turn_cap=3, max_rounds=2)
    rig(state, LOW4, turn=0)
    state.turns = 1
    play(state, "fold")  # turn 1: +1 stays
    play(state, "draw", "decline", "draw", "decline")  # turns 2, 3
    record = GAME.hand_records(state)[-1]
    assert record["end"] == "turn_cap" and record["winner"] == -1
    assert record["points"] == [1, 0, 0, 0]
    assert state.round_no == 1 and not GAME.is_over(state)


def test_l10_turn_cap_one_round_match() -> None:
    state = new(turn_cap=1, max_rounds=1)
    play(state, "draw", "decline")
    if not GAME.is_over(state):
        play(state, "continue")
    assert GAME.is_over(state) and GAME.scores(state) == [0, 0, 0, 0]
    assert GAME.view(state, 0)["to_act"] == -1 and GAME.view(state, 0)["phase"] == "over"


def test_l12_match_ends_when_a_score_reaches_the_target() -> None:
    state = new()
    state.totals = [15, 0, 0, 0]
    rig(state, [["TD", "JH", "KH", "QD"], *LOW4[1:]], turn=0)
    play(state, "show_win")
    assert GAME.is_over(state) and GAME.result(state).ranks == (1, 2, 2, 2)


def test_l12_target_option_26_plays_on_at_25() -> None:
    state = new(target=26)
    state.totals = [15, 0, 0, 0]
    rig(state, [["TD", "JH", "KH", "QD"], *LOW4[1:]], turn=0)
    play(state, "show_win")
    assert not GAME.is_over(state) and GAME.scores(state) == [25, 0, 0, 0]


def test_l12_match_ends_after_max_rounds_and_scores_may_be_negative() -> None:
    state = new(3, max_rounds=2)
    t = state.starter
    for _ in range(2):
        assert not GAME.is_over(state)
        rig(state, LOW, turn=state.turn)
        play(state, "kill:" + str((state.turn + 1) % 3), "fold")  # killer -4, folder +1
    assert GAME.is_over(state) and len(GAME.hand_records(state)) == 2
    expected = [0, 0, 0]
    expected[t], expected[(t + 1) % 3], expected[(t + 2) % 3] = -3, 7, 2
    assert GAME.scores(state) == expected


def test_l10_l12_options_are_checked_and_bound_the_match() -> None:
    with pytest.raises(BadOptionError, match="target"):
        new(target=25)
    with pytest.raises(BadOptionError, match="turn_cap"):
        new(turn_cap=0)
    assert GAME.decision_bound(4, GAME.spec.defaults()) == 12 * 200 * 4


def test_l5_kl3_illegal_actions_are_refused() -> None:
    state = new(seed=3)
    with pytest.raises(IllegalActionError):
        GAME.apply(state, "fold")  # the starter's first turn is draw-only
    rig(state, LOW4, turn=0)
    with pytest.raises(IllegalActionError):
        GAME.apply(state, "kill:0")


# --- L13: visibility, hidden cards and resampling ------------------------------------------


def test_l13_views_hide_other_private_cards() -> None:
    state = new(seed=9)
    for seat in range(4):
        shown = set(leaves(GAME.view(state, seat)))
        for other in range(4):
            if other != seat and state.hands[other][3] not in state.hands[seat]:
                assert state.hands[other][3] not in shown
                assert state.hands[other][3] in GAME.hidden_cards(state, seat)


def test_l13_hand_record_publishes_the_deal_the_deck_and_final_hands() -> None:
    state = new(seed=4, max_rounds=1)
    deal = [list(h) for h in state.hands]
    deck = state.deck[::-1]
    s = state.starter
    play(state, "draw", "decline")
    if GAME.to_act(state) == s:
        play(state, "continue")
    play(state, "fold", "fold", "fold")
    record = GAME.hand_records(state)[0]
    assert [d["cards"] for d in record["deal"]] == deal
    assert record["deck"] == deck
    assert record["winner"] == s and record["end"] == "survivor"
    assert record["final_hands"][s]["cards"] == sort_cards(state.hands[s])
    dealt = [e["secret"] for e in record["events"] if e["kind"] == "deal"]
    assert sorted(dealt) == sorted(h[3] for h in deal)


def test_l13_record_shows_given_card_discards_and_redraw() -> None:
    state = new(max_rounds=1)
    hands = [["5H", "7C", "2D", "9S"], ["4D", "5D", JOKER, "8S"], *LOW4[2:]]
    rig(state, hands, top=("QH", "9C"), turn=0)
    play(state, "draw", "two:5H+7C>p2", "discard:6C")
    play(state, "claim_joker:0")  # seat 1 asks seat 0: no Joker
    play(state, "claim_joker:1", "discard:4C")  # seat 2 takes seat 1's Joker
    play(state, "fold", "fold", "fold")
    events_ = GAME.hand_records(state)[-1]["events"]
    by_kind = {e["kind"]: e for e in events_}
    assert by_kind["two"]["secret"] == "5H" and by_kind["two"]["secret_seats"] == [0, 2]
    assert [e["secret"] for e in events_ if e["kind"] == "discard"] == ["6C", "4C"]
    assert by_kind["joker_draw"]["secret"] == "9C"


def test_l13_resample_keeps_the_view_and_public_knowledge() -> None:
    hands = [["5H", "7C", "2D", "9S"], ["TH", "JH", "QH", "7D"], *LOW4[2:]]
    state = rig(new(), hands, top=("QD", "KC"), turn=0)
    play(state, "draw", "two:5H+7C>p2", "discard:6C")  # seat 3 sees the pair split 0/2
    play(state, "claim_joker:3")  # seat 1's hand is revealed; no Joker
    play(state, "draw", "decline")  # seat 2 declines KC
    rng = random.Random(5)
    changed = 0
    for _ in range(30):
        alt = GAME.resample(state, 3, rng)
        assert GAME.view(alt, 3) == GAME.view(state, 3)
        assert sorted(alt.hands[1]) == sorted(hands[1])  # revealed, unchanged since
        assert "KC" in alt.used and "QD" in alt.hands[0]
        assert ("5H" in alt.hands[0]) != ("7C" in alt.hands[0])
        assert ("5H" in alt.hands[2]) != ("7C" in alt.hands[2])
        assert JOKER not in alt.hands[1]
        assert Counter(c for h in alt.hands for c in h) + Counter(alt.deck + alt.used) == ALL
        changed += alt.hands != state.hands or alt.deck != state.deck
    assert changed >= 25


def test_l13_resample_of_a_pending_two_card_keeps_the_recipient_coherent() -> None:
    hands = [["5H", "7C", "2D", "9S"], *LOW4[1:]]
    state = rig(new(), hands, top=("QD",), turn=0)
    play(state, "draw", "two:5H+7C>p2")
    rng = random.Random(1)
    givens = set()
    for _ in range(20):
        alt = GAME.resample(state, 1, rng)
        assert alt.given in alt.hands[2] and alt.given in ("5H", "7C")
        givens.add(alt.given)
        play(alt, ids(alt)[0])
    assert givens == {"5H", "7C"}


def test_l13_knowledge_follows_every_card_through_random_play() -> None:
    rng = random.Random(3)
    for seed in range(4):
        state = new(3 + seed % 2, seed=seed)
        for step in range(300):
            if GAME.is_over(state):
                break
            legal = GAME.legal_actions(state)
            quiet = [a for a in legal if a.kind not in ("kill", "fold", "show_trio")]
            GAME.apply(state, rng.choice(quiet if rng.random() < 0.95 else legal))
            if step % 4 == 0:
                know = GAME.knowledge(state)
                where: dict[int, Counter[str]] = {}
                for label, place in know.loc.items():
                    where.setdefault(place, Counter())[code_of(label)] += 1
                assert where.get(DECK, Counter()) == Counter(state.deck)
                assert where.get(USED, Counter()) == Counter(state.used)
                for v, mask in enumerate(know.masks):
                    assert all(mask[label] & place for label, place in know.loc.items()), v
                seat = step % state.seats
                alt = GAME.resample(state, seat, random.Random(step))
                assert GAME.view(alt, seat) == GAME.view(state, seat)
                assert not GAME.hidden_cards(state, seat) & set(leaves(GAME.view(state, seat)))
