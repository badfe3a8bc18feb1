"""Knives scenarios, one or more per rule and ruling of RULINGS §1 (K1–K17, KV1–KV16)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.base import competition_ranks
from games.errors import BadOptionError, IllegalActionError
from games.knives import DECK, GAME, ORDER, STARS, KnivesState, _settle_shadow, banker_payout

# A rigged deal for dealer 4: hearts strong, seat 0 picks and seat 4 holds the Ghost of hearts.
DEAL = [
    "AK 7K KH QH JH MH",
    "KS QS JS MS TS GS",
    "KC QC JC MC TC GC",
    "KD QD JD MD TD GD",
    "JO 6K 5K 4K TH GH",
]
BANK = "3K 2K"


def cards(text: str) -> list[str]:
    return sorted(text.split(), key=ORDER.__getitem__)


def deal(
    hands: list[str] | None = None, bank: str = BANK, dealer: int = 4, **options: Any
) -> KnivesState:
    """A new match whose current hand is dealt by `dealer` with the given hands and bank."""
    state = GAME.new_match(1, 5, options)
    state.dealer = dealer
    GAME._deal(state)
    state.hands = [cards(h) for h in (hands or DEAL)]
    state.dealt = [list(h) for h in state.hands]
    state.bank = bank.split()
    state.legal_cache = None
    return state


def act(state: KnivesState, *ids: str) -> None:
    for action_id in ids:
        GAME.apply(state, action_id)


def play(state: KnivesState, *codes: str) -> None:
    act(state, *(f"play:{c}" for c in codes))


def legal(state: KnivesState) -> list[str]:
    return [a.id for a in GAME.legal_actions(state)]


def banker_hand(
    hands: list[str] | None = None, bank_cards: tuple[str, str] = ("3K", "2K"), **options: Any
) -> KnivesState:
    """Dealer 4 names hearts, seat 0 picks, banks two cards and says NO_SOLO: seat 1 to lead."""
    state = deal(hands, **options)
    act(state, "suit:hearts", "pick", f"bank:{bank_cards[0]}", f"bank:{bank_cards[1]}")
    act(state, "no_solo")
    return state


def at_play(
    hands: list[str],
    strong: str = "H",
    leader: int = 0,
    done_tricks: int = 0,
    mode: str = "banker",
    **options: Any,
) -> KnivesState:
    """A state in the play phase with the given hands (any length), seat 0 banker by default."""
    state = GAME.new_match(1, 5, options)
    state.dealer = 4
    state.hands = [cards(h) for h in hands]
    state.strong = state.declared = strong
    state.ghost = "G" + strong
    state.mode = mode
    if mode == "banker":
        state.banker = 0
        state.settled = True
    state.phase = "play"
    state.leader = state.actor = leader
    state.tricks = [
        {"leader": 0, "cards": [], "winner": 0, "next_leader": 0} for _ in range(done_tricks)
    ]
    if mode == "banker":
        _settle_shadow(state)
    state.legal_cache = None
    return state


def last_trick(
    stars: list[int],
    banked: str = "KS QS",
    ghost_by: int = 2,
    solo_announced: bool = False,
    tricks_won: list[int] | None = None,
    mode: str = "banker",
    totals: list[int] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Play a star-less sixth trick after five tricks that gave `stars`; the hand's record."""
    state = at_play(["2K", "3K", "4K", "5K", "6K"], done_tricks=5, mode=mode, **options)
    state.stars = list(stars)
    state.tricks_won = list(tricks_won or [1, 1, 1, 1, 1])
    state.totals = list(totals or [0] * 5)
    if mode == "banker":
        state.banked = banked.split()
        state.ghost_by = ghost_by
        state.solo_announced = solo_announced
        _settle_shadow(state)
    play(state, "2K", "3K", "4K", "5K", "6K")
    record: dict[str, Any] = GAME.hand_records(state)[-1]
    return record


def trick_result(state: KnivesState) -> tuple[int, int]:
    """Winner and next leader of the last completed trick."""
    trick = state.tricks[-1]
    return trick["winner"], trick["next_leader"]


# K1 / K2 -------------------------------------------------------------------------------------


def test_k1_deck_has_32_cards_and_25_stars() -> None:
    assert len(DECK) == len(set(DECK)) == 32
    assert sum(STARS.values()) == 25
    assert STARS["KH"] == 3 and STARS["QS"] == 2 and STARS["JD"] == 1 and STARS["AK"] == 1
    assert STARS["7K"] == STARS["MH"] == STARS["TC"] == STARS["GS"] == STARS["JO"] == 0


def test_k2_six_cards_each_and_an_unseen_bank_of_two() -> None:
    state = GAME.new_match(3)
    assert [len(h) for h in state.hands] == [6] * 5 and len(state.bank) == 2
    assert len({c for h in state.hands for c in h} | set(state.bank)) == 32
    for seat in range(5):
        assert GAME.view(state, seat)["bank"] == []
        assert set(state.bank) <= GAME.hidden_cards(state, seat)


def test_k2_deck_of_hand_k_depends_only_on_seed_and_k() -> None:
    a, b = GAME.new_match(7), GAME.new_match(7, options={"trumps_one_suit": True})
    assert a.hands == b.hands and a.bank == b.bank
    assert GAME.new_match(8).hands != a.hands


# K3 / K4 / KV1 / KV2 / KV3 -------------------------------------------------------------------


def test_k3_dealer_declares_a_traditional_strong_suit_never_knives() -> None:
    state = deal()
    assert GAME.to_act(state) == 4
    assert legal(state) == ["suit:spades", "suit:clubs", "suit:diamonds", "suit:hearts"]
    with pytest.raises(IllegalActionError):
        GAME.apply(state, "suit:knives")
    act(state, "suit:clubs")
    assert all(GAME.view(state, s)["strong_suit"] == "clubs" for s in range(5))


def test_k4_auction_starts_left_of_dealer_and_first_pick_ends_it() -> None:
    state = deal()
    act(state, "suit:hearts")
    assert GAME.to_act(state) == 0
    act(state, "pass:spades")
    assert GAME.to_act(state) == 1
    act(state, "pick")
    view = GAME.view(state, 3)
    assert view["banker"] == 1 and view["strong_suit"] == "spades" and view["phase"] == "bank"
    assert view["auction"] == (
        {"seat": 0, "action": "pass", "suit": "spades"},
        {"seat": 1, "action": "pick", "suit": ""},
    )
    assert GAME.to_act(state) == 1


def test_kv1_a_passer_cannot_rename_the_current_strong_suit() -> None:
    state = deal()
    act(state, "suit:hearts")
    assert legal(state) == ["pick", "pass:spades", "pass:clubs", "pass:diamonds"]
    act(state, "pass:clubs")
    assert "pass:clubs" not in legal(state) and "pass:hearts" in legal(state)


def test_kv2_dealer_bids_last_of_five() -> None:
    state = deal(dealer=2)
    act(state, "suit:hearts")
    order = []
    for suit in ("spades", "clubs", "diamonds", "hearts"):
        order.append(GAME.to_act(state))
        act(state, f"pass:{suit}")
    assert order == [3, 4, 0, 1] and GAME.to_act(state) == 2
    assert "pick" in legal(state)


def test_kv3_k8_dealers_pass_names_the_final_suit_then_he_chooses_leaster_or_moster() -> None:
    state = deal()
    act(state, "suit:hearts", "pass:spades", "pass:clubs", "pass:diamonds", "pass:hearts")
    act(state, "pass:clubs")
    assert GAME.to_act(state) == 4 and legal(state) == ["leaster", "moster"]
    assert GAME.view(state, 0)["strong_suit"] == "clubs"
    act(state, "moster")
    view = GAME.view(state, 1)
    assert view["mode"] == "moster" and view["banker"] == -1 and view["phase"] == "play"


# K5 / KV5 ------------------------------------------------------------------------------------


def test_k5_picker_takes_the_bank_and_banks_two_of_any_cards() -> None:
    state = deal()
    act(state, "suit:hearts", "pick")
    assert len(state.hands[0]) == 8
    assert GAME.view(state, 0)["bank"] == ["3K", "2K"]
    assert legal(state) == [f"bank:{c}" for c in cards("AK 7K 3K 2K KH QH JH MH")]
    act(state, "bank:AK")
    assert GAME.to_act(state) == 0 and "bank:AK" not in legal(state)
    act(state, "bank:KH")
    assert len(state.hands[0]) == 6 and GAME.view(state, 0)["banked"] == ["AK", "KH"]
    assert GAME.view(state, 0)["phase"] == "solo"


def test_kv5_the_joker_and_ghosts_can_be_banked() -> None:
    hands = list(DEAL)
    hands[0], hands[4] = "JO GH KH QH JH MH", "AK 7K 6K 5K 4K TH"
    state = deal(hands)
    act(state, "suit:hearts", "pick", "bank:JO", "bank:GH")
    assert state.banked == ["JO", "GH"]


def test_k5_banked_stars_count_for_the_banker() -> None:
    record = last_trick([5, 2, 1, 2, 0], banked="KS QS")
    assert record["banker_side_stars"] == 5 + 1 + 5
    assert record["points"] == [0, 1, 0, 1, 1]


# K6 / KV6 / K7 / KV7 -------------------------------------------------------------------------


def test_k6_shadow_is_the_non_banker_holding_the_strong_ghost() -> None:
    state = deal()
    act(state, "suit:hearts", "pick", "bank:3K", "bank:2K")
    assert state.shadow == 4 and not state.alone
    assert GAME.view(state, 4)["shadow"] == 4
    assert [GAME.view(state, s)["shadow"] for s in range(4)] == [-1] * 4
    assert not GAME.view(state, 0)["banker_solo"]


def test_kv6_banker_holding_the_strong_ghost_is_solo() -> None:
    hands = list(DEAL)
    hands[0], hands[4] = "AK 7K KH QH JH GH", "JO 6K 5K 4K TH MH"
    state = deal(hands)
    act(state, "suit:hearts", "pick", "bank:3K", "bank:2K")
    assert state.alone and state.shadow == -1
    assert GAME.view(state, 0)["banker_solo"] is True
    assert [GAME.view(state, s)["banker_solo"] for s in range(1, 5)] == [False] * 4


def test_kv6_banked_strong_ghost_means_solo_and_solo_payouts() -> None:
    hands = list(DEAL)
    hands[0], hands[4] = "AK 7K KH QH JH GH", "JO 6K 5K 4K TH MH"
    state = deal(hands)
    act(state, "suit:hearts", "pick", "bank:GH", "bank:2K", "no_solo")
    assert state.alone and state.shadow == -1
    rng = random.Random(4)
    while len(GAME.hand_records(state)) == 0:
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    record = GAME.hand_records(state)[0]
    assert record["solo"] is True and record["shadow"] == -1 and not record["solo_announced"]
    b = record["banker_side_stars"]
    assert b == record["stars"][0] + 0  # GH and 2K carry no stars
    if b >= 13:
        assert record["points"] == [banker_payout(b, True, False, False), 0, 0, 0, 0]
    else:
        assert record["points"] == [0, 1, 1, 1, 1]


def test_k7_voluntary_solo_is_offered_and_public() -> None:
    state = deal()
    act(state, "suit:hearts", "pick", "bank:3K", "bank:2K")
    assert legal(state) == ["solo", "no_solo"]
    act(state, "solo")
    assert all(GAME.view(state, s)["solo_announced"] for s in range(5))
    assert all(GAME.view(state, s)["banker_solo"] for s in range(5))
    assert GAME.view(state, 4)["shadow"] == -1 and state.shadow == -1
    assert GAME.to_act(state) == 1


def test_kv7_after_solo_the_ghost_holder_is_a_defender() -> None:
    record = last_trick([5, 2, 6, 2, 2], banked="MS MC", ghost_by=4, solo_announced=True)
    assert record["solo"] is True and record["shadow"] == -1
    assert record["banker_side_stars"] == 5
    assert record["points"] == [0, 1, 1, 1, 1]


def test_k7_info_only_offers_solo_only_when_already_alone() -> None:
    state = deal(solo_mode="info_only")
    act(state, "suit:hearts", "pick", "bank:3K", "bank:2K")
    assert legal(state) == ["no_solo"]
    with pytest.raises(IllegalActionError):
        GAME.apply(state, "solo")
    hands = list(DEAL)
    hands[0], hands[4] = "AK 7K KH QH JH GH", "JO 6K 5K 4K TH MH"
    state = deal(hands, solo_mode="info_only")
    act(state, "suit:hearts", "pick", "bank:3K", "bank:2K")
    assert legal(state) == ["solo", "no_solo"]


# K8 / KV4 / KV12 / KV14 ----------------------------------------------------------------------


def all_pass(state: KnivesState) -> None:
    act(state, "suit:hearts", "pass:spades", "pass:clubs", "pass:diamonds", "pass:hearts")
    act(state, "pass:spades")


def test_kv4_k8_default_bank_is_discarded_unseen() -> None:
    state = deal()
    all_pass(state)
    act(state, "leaster")
    assert GAME.view(state, 4)["bank"] == [] and GAME.view(state, 4)["revealed"] == []
    assert {"3K", "2K"} <= GAME.hidden_cards(state, 4)
    assert [len(h) for h in state.hands] == [6] * 5
    assert GAME.to_act(state) == 0  # K10: the dealer's left leads


def test_k8_bank_reveal_option_dealer_sees_bank_and_reveals_one_by_one() -> None:
    state = deal(leaster_bank_reveal=True)
    all_pass(state)
    act(state, "leaster")
    assert GAME.view(state, 4)["bank"] == ["3K", "2K"] and GAME.view(state, 0)["bank"] == []
    assert legal(state) == ["reveal:3K", "reveal:2K", "done"]
    assert GAME.public_label(state, "reveal:2K") == "reveal"
    act(state, "reveal:2K")
    assert legal(state) == ["reveal:3K", "done"]
    assert GAME.public_label(state, "done") == "done; shows 2K"  # published together
    assert GAME.view(state, 4)["revealed"] == ["2K"] and GAME.view(state, 0)["revealed"] == []
    assert "2K" in GAME.hidden_cards(state, 0)
    act(state, "done")
    assert all(GAME.view(state, s)["revealed"] == ["2K"] for s in range(5))
    assert "2K" not in GAME.hidden_cards(state, 0) and "3K" in GAME.hidden_cards(state, 0)
    assert GAME.to_act(state) == 0


def test_kv12_leaster_tie_and_zero_trick_players_count_zero() -> None:
    record = last_trick([0, 0, 5, 10, 4], tricks_won=[0, 1, 1, 2, 1], mode="leaster")
    assert record["points"] == [2, 2, 0, 0, 0]


def test_kv12_leaster_needs_trick_option_excludes_trickless_players() -> None:
    record = last_trick(
        [0, 1, 5, 10, 3], tricks_won=[0, 1, 1, 2, 1], mode="leaster", leaster_needs_trick=True
    )
    assert record["points"] == [0, 2, 0, 0, 0]


def test_k14_moster_everyone_tied_for_most_scores_two() -> None:
    record = last_trick([9, 9, 0, 1, 0], tricks_won=[2, 2, 0, 1, 0], mode="moster")
    assert record["points"] == [2, 2, 0, 0, 0]


def test_kv14_bank_stars_count_for_no_one_in_leaster() -> None:
    state = deal(bank="KS KC")
    state.hands[1] = cards("3K QS JS MS TS GS")
    state.hands[2] = cards("2K QC JC MC TC GC")
    all_pass(state)
    act(state, "moster")
    rng = random.Random(2)
    while not GAME.hand_records(state):
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    record = GAME.hand_records(state)[0]
    assert sum(record["stars"]) == 25 - 6
    assert record["banker_side_stars"] == -1


# K9 / K10 / K11 / KV8 / KV9 ------------------------------------------------------------------


def test_k9_knife_beats_strong_suit_which_beats_fail_suits() -> None:
    state = at_play(["KS", "QS", "MH", "JS", "GS"])
    play(state, "KS", "QS", "MH", "JS", "GS")
    assert trick_result(state)[0] == 2
    state = at_play(["KS", "KH", "2K", "JS", "GS"])
    play(state, "KS", "KH", "2K", "JS", "GS")
    assert trick_result(state)[0] == 2


def test_k10_banker_left_leads_trick_one() -> None:
    state = deal(dealer=1)
    act(state, "suit:hearts", "pass:spades", "pass:clubs", "pick", "bank:3K", "bank:2K")
    act(state, "no_solo")
    assert GAME.to_act(state) == 0 and GAME.view(state, 2)["leader"] == 0


def test_k11_must_follow_the_printed_suit_or_play_the_joker() -> None:
    state = at_play(["KS", "JO QS MH 2K", "MD", "MC", "JS"])
    play(state, "KS")
    assert legal(state) == ["play:JO", "play:QS"]
    state = at_play(["KS", "MH 2K", "MD", "MC", "JS"])
    play(state, "KS")
    assert legal(state) == ["play:2K", "play:MH"]


def test_kv8_knives_and_the_strong_suit_are_separate_suits_by_default() -> None:
    state = at_play(["KH", "2K QS", "MD", "MC", "JS"])
    play(state, "KH")
    assert legal(state) == ["play:2K", "play:QS"]
    state = at_play(["2K", "MH QS", "MD", "MC", "JS"])
    play(state, "2K")
    assert legal(state) == ["play:QS", "play:MH"]


def test_kv8_trumps_one_suit_option_joins_knives_and_strong_suit() -> None:
    state = at_play(["KH", "2K QS", "MD", "MC", "JS"], trumps_one_suit=True)
    play(state, "KH")
    assert legal(state) == ["play:2K"]
    state = at_play(["2K", "MH QS", "MD", "MC", "JS"], trumps_one_suit=True)
    play(state, "2K")
    assert legal(state) == ["play:MH"]


def test_kv9_a_led_joker_leaves_the_trick_without_a_led_suit_and_wins() -> None:
    state = at_play(["JO", "KS QH", "QS MH", "2K MD", "JS MC"])
    play(state, "JO")
    assert GAME.view(state, 1)["led_suit"] == ""
    assert legal(state) == ["play:KS", "play:QH"]
    play(state, "KS")
    assert GAME.view(state, 2)["led_suit"] == ""
    assert legal(state) == ["play:QS", "play:MH"]
    play(state, "MH", "2K", "JS")
    assert trick_result(state)[0] == 0


def test_kv9_the_joker_may_be_played_while_holding_the_led_suit_and_wins() -> None:
    state = at_play(["2K", "JO 3K", "AK", "MD", "JS"])
    play(state, "2K")
    assert legal(state) == ["play:JO", "play:3K"]
    play(state, "JO", "AK", "MD", "JS")
    assert trick_result(state)[0] == 1


# K12 / KV10 ----------------------------------------------------------------------------------


def test_kv10_ghost_beats_the_king_of_its_suit_in_the_same_trick() -> None:
    state = at_play(["KS", "GS", "MS", "QS", "JS"])
    play(state, "KS", "GS", "MS", "QS", "JS")
    assert trick_result(state)[0] == 1


def test_kv10_ghost_without_its_king_in_the_trick_is_lowest() -> None:
    state = at_play(["KS GS", "QS TS", "MS MC", "JS JC", "MD QD"])
    play(state, "KS", "QS", "MS", "JS", "MD")  # the King falls in trick 1
    assert trick_result(state) == (0, 0)
    play(state, "GS", "TS", "MC", "JC", "QD")
    assert trick_result(state)[0] == 1
    state = at_play(["GS", "QS", "MS", "TS", "JS"])
    play(state, "GS", "QS", "MS", "TS", "JS")
    assert trick_result(state)[0] == 1


def test_kv10_trumps_still_beat_a_fail_suit_ghost() -> None:
    state = at_play(["KS", "GS", "MH", "QS", "JS"])
    play(state, "KS", "GS", "MH", "QS", "JS")
    assert trick_result(state)[0] == 2


def test_kv10_strong_suit_ghost_beats_its_king_but_not_a_knife() -> None:
    state = at_play(["KH", "GH", "MS", "QS", "JS"])
    play(state, "KH", "GH", "MS", "QS", "JS")
    assert trick_result(state)[0] == 1
    state = at_play(["KH", "GH", "MS", "2K", "JS"])
    play(state, "KH", "GH", "MS", "2K", "JS")
    assert trick_result(state)[0] == 3


def test_k16_simplified_rules_have_no_ghost_power() -> None:
    state = at_play(["KS", "GS", "MS", "QS", "JS"], strong="S", simplified_rules=True)
    play(state, "KS", "GS", "MS", "QS", "JS")
    assert trick_result(state)[0] == 0


# K13 / KV11 ----------------------------------------------------------------------------------


def test_kv11_one_thief_leads_next_but_the_winner_takes_the_cards() -> None:
    state = at_play(["KS", "QS", "TS", "JS", "MS"])
    play(state, "KS", "QS", "TS", "JS", "MS")
    assert trick_result(state) == (0, 2)
    assert GAME.to_act(state) == 2
    assert state.tricks_won == [1, 0, 0, 0, 0] and state.stars == [6, 0, 0, 0, 0]


def test_kv11_two_thieves_cancel() -> None:
    state = at_play(["KS", "QS", "TS", "TC", "MS"])
    play(state, "KS", "QS", "TS", "TC", "MS")
    assert trick_result(state) == (0, 0)


def test_kv11_joker_and_a_thief() -> None:
    state = at_play(["KS", "JO", "TD", "JS", "MS"])
    play(state, "KS", "JO", "TD", "JS", "MS")
    assert trick_result(state) == (1, 2)


def test_k13_thief_has_no_effect_on_trick_six() -> None:
    state = at_play(["KS", "QS", "TS", "JS", "MS"], done_tricks=5)
    play(state, "KS", "QS", "TS", "JS", "MS")
    assert GAME.hand_records(state)[0]["tricks"][-1]["next_leader"] == 0


def test_k16_simplified_rules_have_no_thief_power() -> None:
    state = at_play(["KS", "QS", "TS", "JS", "MS"], strong="S", simplified_rules=True)
    play(state, "KS", "QS", "TS", "JS", "MS")
    assert trick_result(state) == (0, 0)


# K14 / KV13: payout bands ------------------------------------------------------------------


def partnership(b: int, **options: Any) -> dict[str, Any]:
    """Banker 0 with shadow 2 (who played the Ghost earlier) reach b stars (5 banked)."""
    rest = 25 - b
    return last_trick([b - 7, rest // 3, 2, rest // 3, rest - 2 * (rest // 3)], **options)


def solo(b: int, **options: Any) -> dict[str, Any]:
    """Banker 0 alone (he played the strong Ghost) reaches b stars (5 banked)."""
    rest = 25 - b
    return last_trick(
        [b - 5, rest // 4, rest // 4, rest // 4, rest - 3 * (rest // 4)], ghost_by=0, **options
    )


@pytest.mark.parametrize(("b", "each"), [(13, 1), (16, 1), (17, 2), (20, 2), (21, 3), (25, 3)])
def test_k14_partnership_bands(b: int, each: int) -> None:
    record = partnership(b)
    assert record["banker_side_stars"] == b and record["shadow"] == 2
    assert record["points"] == [each, 0, each, 0, 0]


@pytest.mark.parametrize(("b", "pay"), [(13, 2), (16, 2), (17, 4), (20, 4), (21, 6), (25, 6)])
def test_k14_solo_bands(b: int, pay: int) -> None:
    record = solo(b)
    assert record["banker_side_stars"] == b and record["solo"] is True
    assert record["points"] == [pay, 0, 0, 0, 0]


def test_kv13_twelve_stars_is_a_defenders_win_against_a_partnership() -> None:
    record = partnership(12)
    assert record["points"] == [0, 1, 0, 1, 1]


def test_kv13_twelve_stars_is_a_defenders_win_against_a_solo() -> None:
    record = solo(12)
    assert record["points"] == [0, 1, 1, 1, 1]


@pytest.mark.parametrize(("b", "each"), [(12, 0), (13, 2), (20, 2), (24, 2), (25, 3)])
def test_k16_simplified_scoring_partnership(b: int, each: int) -> None:
    record = partnership(b, simplified_scoring=True)
    defenders = 1 if b <= 12 else 0
    assert record["points"] == [each, defenders, each, defenders, defenders]


@pytest.mark.parametrize(("b", "pay"), [(13, 4), (21, 4), (24, 4), (25, 6)])
def test_k16_simplified_scoring_solo(b: int, pay: int) -> None:
    assert solo(b, simplified_scoring=True)["points"] == [pay, 0, 0, 0, 0]


@pytest.mark.parametrize("scoring", [False, True])
@pytest.mark.parametrize("b", [13, 17, 25])
def test_k16_simplified_rules_solo_win_is_four_even_with_25(b: int, scoring: bool) -> None:
    record = solo(b, simplified_rules=True, simplified_scoring=scoring)
    assert record["points"] == [4, 0, 0, 0, 0]


def test_k16_simplified_rules_alone_keep_partnership_bands() -> None:
    assert partnership(21, simplified_rules=True)["points"] == [3, 0, 3, 0, 0]


def test_k14_a_full_hand_played_out_pays_the_partnership() -> None:
    state = banker_hand()
    assert GAME.to_act(state) == 1
    play(state, "KS", "KC", "KD", "TH", "AK")  # one Thief: seat 4 leads next
    assert trick_result(state) == (0, 4)
    assert GAME.view(state, 1)["shadow"] == -1 and GAME.view(state, 4)["shadow"] == 4
    play(state, "GH")
    assert all(GAME.view(state, s)["shadow"] == 4 for s in range(5))
    play(state, "KH", "QS", "QC", "QD")  # the Ghost of hearts beats the King of hearts
    assert trick_result(state) == (4, 4)
    play(state, "JO", "QH", "JS", "JC", "JD")
    play(state, "6K", "7K", "MS", "MC", "MD")
    play(state, "JH", "TS", "TC", "TD", "5K")  # three Thieves cancel
    assert trick_result(state) == (4, 4)
    play(state, "4K", "MH", "GS", "GC", "GD")
    record = GAME.hand_records(state)[0]
    assert record["banker_side_stars"] == 25 and record["points"] == [3, 0, 0, 0, 3]
    assert GAME.scores(state) == [3, 0, 0, 0, 3]


def test_k14_scores_never_decrease() -> None:
    for seed in range(3):
        state = GAME.new_match(seed)
        rng = random.Random(seed)
        before = GAME.scores(state)
        while GAME.to_act(state) is not None:
            GAME.apply(state, rng.choice(GAME.legal_actions(state)))
            now = GAME.scores(state)
            assert all(a <= b for a, b in zip(before, now, strict=True))
            before = now
        for record in GAME.hand_records(state):
            assert sum(record["points"]) >= 2


# K15 -----------------------------------------------------------------------------------------


def test_k15_bank_and_banked_cards_only_for_the_banker() -> None:
    state = deal()
    act(state, "suit:hearts", "pick", "bank:AK")
    assert GAME.view(state, 0)["banked"] == ["AK"]
    assert all(GAME.view(state, s)["bank"] == [] for s in range(1, 5))
    assert all(GAME.view(state, s)["banked"] == [] for s in range(1, 5))
    assert "AK" in GAME.hidden_cards(state, 3) and "3K" in GAME.hidden_cards(state, 3)


def test_k15_no_view_holds_another_seats_cards() -> None:
    state = banker_hand()
    for seat in range(5):
        text = repr(GAME.view(state, seat))
        for other in range(5):
            if other != seat:
                assert not any(f"'{c}'" in text for c in state.hands[other])


def test_k15_shadow_known_to_the_ghost_holder_only_until_the_ghost_is_played() -> None:
    state = banker_hand()
    assert [GAME.view(state, s)["shadow"] for s in range(5)] == [-1, -1, -1, -1, 4]
    play(state, "KS", "KC", "KD", "GH")
    assert [GAME.view(state, s)["shadow"] for s in range(5)] == [4] * 5


def test_k15_banker_playing_the_strong_ghost_shows_he_is_alone() -> None:
    hands = list(DEAL)
    hands[0], hands[4] = "AK 7K KH QH JH GH", "JO 6K 5K 4K TH MH"
    state = banker_hand(hands)
    assert not GAME.view(state, 2)["banker_solo"]
    play(state, "KS", "KC", "KD", "TH", "GH")
    assert all(GAME.view(state, s)["banker_solo"] for s in range(5))
    assert all(GAME.view(state, s)["shadow"] == -1 for s in range(5))


def test_k15_resample_keeps_the_view_and_moves_hidden_cards() -> None:
    state = banker_hand()
    play(state, "KS", "KC")
    moved = 0
    for i in range(20):
        alt = GAME.resample(state, 1, random.Random(i))
        assert GAME.view(alt, 1) == GAME.view(state, 1)
        moved += alt.hands != state.hands
        assert not any(c[1] == "S" for c in alt.hands[2])  # seat 2 showed a spade void
    assert moved > 10


def test_0_6_hand_record_holds_every_hidden_card_and_action() -> None:
    state = banker_hand()
    rng = random.Random(3)
    while not GAME.hand_records(state):
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    record = GAME.hand_records(state)[0]
    assert [r["cards"] for r in record["deal"]] == [cards(h) for h in DEAL]
    assert record["bank"] == ["3K", "2K"] and record["banked"] == ["3K", "2K"]
    assert record["shadow"] == 4 and record["banker"] == 0 and record["mode"] == "banker"
    assert record["actions"][:5] == ["suit:hearts", "pick", "bank:3K", "bank:2K", "no_solo"]
    assert len(record["actions"]) == 35 and len(record["tricks"]) == 6


# K16 simplified rules -----------------------------------------------------------------------


def test_k16_simplified_rules_spades_strong_no_declaration_and_dealer_must_pick() -> None:
    state = deal(simplified_rules=True)
    assert GAME.to_act(state) == 0 and legal(state) == ["pick", "pass"]
    assert GAME.view(state, 0)["strong_suit"] == "spades"
    act(state, "pass", "pass", "pass", "pass")
    assert GAME.to_act(state) == 4 and legal(state) == ["pick"]
    act(state, "pick", "bank:3K", "bank:2K")
    assert state.shadow == 1  # the Ghost of spades


# K17 / KV15 / KV16 ---------------------------------------------------------------------------


def test_kv15_first_dealer_random_then_moves_left() -> None:
    dealers = {GAME.new_match(seed).dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3, 4}
    state = GAME.new_match(11)
    first = state.dealer
    rng = random.Random(1)
    while len(GAME.hand_records(state)) < 2 and GAME.to_act(state) is not None:
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    assert [r["dealer"] for r in GAME.hand_records(state)] == [first, (first + 1) % 5]


def test_k17_match_ends_after_the_hand_someone_reaches_the_target() -> None:
    record = partnership(13, totals=[8, 0, 0, 0, 0])
    assert record["scores"] == [9, 0, 1, 0, 0]
    state = at_play(["2K", "3K", "4K", "5K", "6K"], done_tricks=5)
    state.stars, state.banked, state.ghost_by = [6, 4, 2, 4, 4], ["KS", "QS"], 2
    state.totals = [9, 9, 9, 0, 0]
    _settle_shadow(state)
    play(state, "2K", "3K", "4K", "5K", "6K")
    assert GAME.is_over(state) and GAME.to_act(state) is None
    assert GAME.view(state, 0)["to_act"] == -1
    result = GAME.result(state)
    assert result.scores == (10, 9, 10, 0, 0) and result.ranks == (1, 3, 1, 4, 4)


def test_k17_target_option_raises_the_bar() -> None:
    state = at_play(["2K", "3K", "4K", "5K", "6K"], done_tricks=5, target=15)
    state.stars, state.banked, state.ghost_by = [6, 4, 2, 4, 4], ["KS", "QS"], 2
    state.totals = [9, 9, 0, 0, 0]
    _settle_shadow(state)
    play(state, "2K", "3K", "4K", "5K", "6K")
    assert not GAME.is_over(state) and state.hand_number == 1


def test_kv16_ties_at_the_top_share_first_place() -> None:
    assert competition_ranks([10, 10, 4, 3, 3]) == (1, 1, 3, 4, 4)


def test_k17_decision_bound() -> None:
    assert GAME.decision_bound(5, {"target": 10}) == 23 * 40
    assert GAME.decision_bound(5, {"target": 20}) == (5 * 19 // 2 + 1) * 40


def test_options_are_checked() -> None:
    with pytest.raises(BadOptionError, match="target"):
        GAME.new_match(1, 5, {"target": 12})
    with pytest.raises(BadOptionError, match="solo_mode"):
        GAME.new_match(1, 5, {"solo_mode": "never"})
    assert GAME.new_match(1).options == {
        "target": 10,
        "simplified_scoring": False,
        "simplified_rules": False,
        "solo_mode": "voluntary",
        "trumps_one_suit": False,
        "leaster_bank_reveal": False,
        "leaster_needs_trick": False,
    }


def test_kv9_playing_the_joker_on_a_lead_shows_no_void() -> None:
    state = at_play(["KS MD", "JO QS", "JS MC", "MS JC", "TS QD"])
    play(state, "KS", "JO")
    spades = [
        any(c[1] == "S" for c in GAME.resample(state, 2, random.Random(i)).hands[1])
        for i in range(40)
    ]
    assert any(spades) and not all(spades)
    play(state, "JS")
    with pytest.raises(IllegalActionError):
        play(state, "JC")  # seat 3 holds MS and spades are still the led suit
