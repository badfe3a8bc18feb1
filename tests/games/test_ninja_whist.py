"""Ninja Whist scenarios, one or more per rule W1–W13 and ruling NW1–NW17 of RULINGS §4."""

from __future__ import annotations

import random

import pytest

from games.cards import seeded_rng
from games.errors import BadOptionError, IllegalActionError
from games.ninja_whist import (
    DECK,
    EFF,
    GAME,
    ICONS,
    PHASE_ATTACH,
    PHASE_PLAY,
    TOKENS,
    NinjaWhistState,
    schedule,
)
from tests.games.contract import leaves

SEED = 11


def table(
    hands: list[list[str]],
    *,
    trump: str = "",
    leader: int = 0,
    areas: list[list[str]] | None = None,
    stock: list[str] | None = None,
    bids: list[int] | None = None,
    round_index: int = 1,
    options: dict[str, object] | None = None,
) -> NinjaWhistState:
    """A match set to the play phase with the given hands, trump, leader and token areas."""
    n = len(hands)
    st = GAME.new_match(SEED, n, options or {})
    st.round_index = round_index
    st.hand_size = len(hands[0])
    st.hands = [sorted(h, key=DECK.index) for h in hands]
    st.dealt = [list(h) for h in st.hands]
    used = {c for h in hands for c in h}
    st.turned = next(c for c in DECK if c[1] == trump and c not in used) if trump else ""
    st.trump = trump
    st.eff = EFF[trump]
    st.undealt = [c for c in DECK if c not in used and c != st.turned]
    st.bids = list(bids) if bids is not None else [0] * n
    st.phase = PHASE_PLAY
    st.leader = st.actor = leader
    st.score_areas = [list(a) for a in areas] if areas else [[] for _ in range(n)]
    held = {t for a in st.score_areas for t in a}
    st.stock = list(stock) if stock is not None else [t for t in TOKENS if t not in held]
    st.start_scores = GAME.scores(st)
    st.legal_cache = None
    return st


def ids(st: NinjaWhistState) -> list[str]:
    """The legal action ids now."""
    return [a.id for a in GAME.legal_actions(st)]


def play(st: NinjaWhistState, card: str, *tokens: str) -> None:
    """Play a card, attach tokens, and finish with done if it is still asked."""
    seat = st.actor
    GAME.apply(st, f"play:{card}")
    for t in tokens:
        GAME.apply(st, f"attach:{t}")
    if st.phase == PHASE_ATTACH and st.actor == seat:
        GAME.apply(st, "done")


def one_trick(
    cards: list[str],
    trump: str = "",
    boosts: dict[int, list[str]] | None = None,
    leader: int = 0,
) -> dict[str, object]:
    """Play a single 1-card trick (cards in order from the leader); its record."""
    n = len(cards)
    hands: list[list[str]] = [[] for _ in range(n)]
    areas: list[list[str]] = [[] for _ in range(n)]
    for i, c in enumerate(cards):
        hands[(leader + i) % n] = [c]
        areas[(leader + i) % n] = sorted((boosts or {}).get(i, []), key=TOKENS.index)
    st = table(hands, trump=trump, leader=leader, areas=areas)
    for i, c in enumerate(cards):
        play(st, c, *(boosts or {}).get(i, []))
    trick: dict[str, object] = st.records[-1]["tricks"][0]
    return trick


def winning_card(cards: list[str], trump: str = "", **kw: object) -> str:
    """The card that won a 1-card trick."""
    trick = one_trick(cards, trump, **kw)  # type: ignore[arg-type]
    plays = trick["plays"]
    assert isinstance(plays, list)
    return str(next(p["card"] for p in plays if p["seat"] == trick["winner"]))


def finish_with_first_legal(st: NinjaWhistState) -> None:
    """Play the rest of the match choosing the first legal action."""
    while GAME.to_act(st) is not None:
        GAME.apply(st, GAME.legal_actions(st)[0])


# W1, NW1 — the deck


def test_w1_nw1_deck_has_41_cards_four_suits_of_ten_and_the_jack_of_arrows() -> None:
    assert len(DECK) == 41 == len(set(DECK))
    for suit in "STNR":  # Sword, Staff, Knives (NW1: not "Lnives"), Stars
        assert [c for c in DECK if c[1] == suit] == [r + suit for r in "A23456789K"]
    assert [c for c in DECK if c[1] == "*"] == ["J*"]


def test_w1_nw1_knives_is_a_trump_suit_by_name() -> None:
    seed = next(s for s in range(500) if GAME.new_match(s, 4).turned[1:] == "N")
    assert GAME.view(GAME.new_match(seed, 4), 0)["trump"] == "knives"


# W2, NW2 — tokens


def test_w2_31_distinct_tokens_all_in_the_stock_at_the_start() -> None:
    assert len(TOKENS) == 31 == len(set(TOKENS))
    assert sorted(ICONS[t] for t in TOKENS).count(3) == 16
    assert sum(ICONS.values()) == 4 * 1 + 10 * 2 + 16 * 3
    st = GAME.new_match(SEED, 4)
    assert GAME.view(st, 0)["stock_size"] == 31


def test_nw2_icon_a_boosts_sword_only() -> None:
    st = table([["5T"], ["6T"], ["7T"], ["8T"]], areas=[["a", "ab"], [], [], []])
    GAME.apply(st, "play:5T")
    assert ids(st) == ["attach:ab", "done"]  # "a" has no Staff icon


# W3, NW16 — round schedule


@pytest.mark.parametrize(("seats", "top"), [(3, 13), (4, 10), (5, 8), (6, 6), (7, 5), (8, 5)])
def test_w3_round_schedule_runs_1_to_max_to_1(seats: int, top: int) -> None:
    st = GAME.new_match(SEED, seats)
    finish_with_first_legal(st)
    sizes = [r["hand_size"] for r in GAME.hand_records(st)]
    assert sizes == list(range(1, top + 1)) + list(range(top - 1, 0, -1))
    assert len(sizes) == 2 * top - 1


def test_w3_four_players_play_19_rounds_and_the_max_round_has_no_trump() -> None:
    st = GAME.new_match(SEED, 4)
    finish_with_first_legal(st)
    records = GAME.hand_records(st)
    assert len(records) == 19
    for r in records:
        if r["hand_size"] == 10:
            assert r["turned"] == "" and r["trump"] == "none"
        else:
            assert r["turned"] != ""


@pytest.mark.parametrize("seats", [7, 8])
def test_w3_nw16_double_max_plays_the_max_round_twice_both_at_no_trump(seats: int) -> None:
    st = GAME.new_match(SEED, seats, {"double_max": True})
    finish_with_first_legal(st)
    records = GAME.hand_records(st)
    assert [r["hand_size"] for r in records] == [1, 2, 3, 4, 5, 5, 4, 3, 2, 1]
    assert [r["trump"] for r in records if r["hand_size"] == 5] == ["none", "none"]


@pytest.mark.parametrize("seats", [3, 4, 5, 6])
def test_w3_double_max_is_refused_below_seven_players(seats: int) -> None:
    with pytest.raises(BadOptionError, match="double_max"):
        GAME.new_match(SEED, seats, {"double_max": True})


def test_w3_decision_bound_at_four_players() -> None:
    assert schedule(4, False) == [*range(1, 11), *range(9, 0, -1)]
    assert GAME.decision_bound(4, {"double_max": False, "eldest_leads": False}) == 1076


# W4, NW17 — deal and dealer


def test_w4_every_round_reshuffles_all_41_cards_and_deals_h_each() -> None:
    st = GAME.new_match(SEED, 5)
    finish_with_first_legal(st)
    for r in GAME.hand_records(st):
        assert all(len(h) == r["hand_size"] for h in r["deal"])
        cards = [c for h in r["deal"] for c in h] + r["undealt"] + [r["turned"]]
        assert sorted(c for c in cards if c) == sorted(DECK)


def test_w4_the_deal_depends_only_on_seed_and_round() -> None:
    a = GAME.new_match(SEED, 4)
    b = GAME.new_match(SEED, 4)
    finish_with_first_legal(a)
    rng = random.Random(3)
    while GAME.to_act(b) is not None:
        GAME.apply(b, rng.choice(GAME.legal_actions(b)))
    assert [r["deal"] for r in GAME.hand_records(a)] == [r["deal"] for r in GAME.hand_records(b)]


def test_w4_nw17_first_dealer_is_seeded_random_and_moves_left() -> None:
    firsts = set()
    for seed in range(20):
        st = GAME.new_match(seed, 4)
        assert st.dealer == seeded_rng(seed, "first-dealer").randrange(4)
        firsts.add(st.dealer)
    assert len(firsts) > 1
    st = GAME.new_match(SEED, 4)
    finish_with_first_legal(st)
    dealers = [r["dealer"] for r in GAME.hand_records(st)]
    assert all(dealers[i + 1] == (dealers[i] + 1) % 4 for i in range(len(dealers) - 1))


# W5 — trump


def test_w5_turned_card_sets_trump_and_is_public() -> None:
    st = GAME.new_match(SEED, 4)
    names = {"S": "sword", "T": "staff", "N": "knives", "R": "stars"}
    for seat in range(4):
        view = GAME.view(st, seat)
        assert view["turned"] == st.turned and view["trump"] == names[st.turned[1]]
    assert st.turned not in [c for h in st.hands for c in h]


def test_w5_turned_jack_of_arrows_means_no_trump() -> None:
    seed = next(s for s in range(2000) if GAME.new_match(s, 4).turned == "J*")
    st = GAME.new_match(seed, 4)
    assert st.trump == "" and GAME.view(st, 0)["trump"] == "none"


# W6, NW3 — bidding


def test_w6_bidding_starts_left_of_the_dealer_and_the_dealer_bids_last() -> None:
    st = GAME.new_match(SEED, 4)
    order = []
    for _ in range(4):
        order.append(st.actor)
        GAME.apply(st, "bid:0" if st.actor != st.dealer else ids(st)[0])
    d = GAME.new_match(SEED, 4).dealer
    assert order == [(d + 1) % 4, (d + 2) % 4, (d + 3) % 4, d]
    assert GAME.view(st, 0)["bids"][d] >= 0


def test_nw3_bids_run_from_zero_to_the_hand_size() -> None:
    st = GAME.new_match(SEED, 4)
    assert ids(st) == ["bid:0", "bid:1"]
    while st.round_index < 6:
        GAME.apply(st, GAME.legal_actions(st)[0])
    assert st.hand_size == 7
    assert ids(st) == [f"bid:{b}" for b in range(8)]


@pytest.mark.parametrize(
    ("others", "dealer_ids", "forbidden"),
    [
        ([0, 0, 0], ["bid:0"], 1),
        ([1, 0, 0], ["bid:1"], 0),
        ([1, 1, 0], ["bid:0", "bid:1"], -1),
    ],
)
def test_w6_dealer_may_not_bid_to_make_the_total_equal_the_tricks(
    others: list[int], dealer_ids: list[str], forbidden: int
) -> None:
    st = GAME.new_match(SEED, 4)  # round 0: one card each
    for b in others:
        GAME.apply(st, f"bid:{b}")
    assert st.actor == st.dealer
    assert ids(st) == dealer_ids
    assert GAME.view(st, 0)["forbidden_bid"] == forbidden
    if forbidden >= 0:
        with pytest.raises(IllegalActionError):
            GAME.apply(st, f"bid:{forbidden}")


# W7, NW6, NW7, NW13 — leading and following


def test_w7_nw13_the_dealer_leads_the_first_trick() -> None:
    st = GAME.new_match(SEED, 4)
    for _ in range(4):
        GAME.apply(st, GAME.legal_actions(st)[0])
    assert st.phase == PHASE_PLAY and st.actor == st.dealer


def test_w7_nw13_eldest_leads_option_gives_the_lead_to_the_dealers_left() -> None:
    st = GAME.new_match(SEED, 4, {"eldest_leads": True})
    for _ in range(4):
        GAME.apply(st, GAME.legal_actions(st)[0])
    assert st.actor == (st.dealer + 1) % 4


def test_w7_follow_the_led_suit_if_able_else_anything() -> None:
    st = table([["2S", "3T"], ["4S", "5T", "KN"], ["6T", "7R"]], trump="R", areas=None)
    st.hands[1] = ["4S", "5T"]
    st.hands[2] = ["6T", "7R"]
    GAME.apply(st, "play:2S")
    assert ids(st) == ["play:4S"]
    GAME.apply(st, "play:4S")
    assert ids(st) == ["play:6T", "play:7R"]


def test_w7_the_trick_winner_leads_the_next_trick() -> None:
    st = table([["2S", "3S"], ["9S", "4S"], ["5S", "6S"]])
    play(st, "2S")
    play(st, "9S")
    play(st, "5S")
    assert st.tricks[-1]["winner"] == 1 and st.actor == 1 and st.leader == 1


def test_nw6_jack_of_arrows_must_answer_a_trump_lead() -> None:
    st = table([["4S"], ["J*", "5T"], ["6S"]], trump="S")
    GAME.apply(st, "play:4S")
    assert ids(st) == ["play:J*"]


def test_nw6_jack_of_arrows_cannot_be_played_while_holding_the_led_plain_suit() -> None:
    st = table([["4T"], ["J*", "5T"], ["6S"]], trump="S")
    GAME.apply(st, "play:4T")
    assert ids(st) == ["play:5T"]
    st = table([["4T"], ["J*", "5N"], ["6S"]], trump="S")
    GAME.apply(st, "play:4T")
    assert ids(st) == ["play:5N", "play:J*"]


def test_nw6_a_led_jack_of_arrows_is_a_trump_lead() -> None:
    st = table([["J*"], ["2S", "5T"], ["6N"]], trump="S")
    GAME.apply(st, "play:J*")
    assert ids(st) == ["play:2S"]


def test_w7_at_no_trump_the_jack_is_a_one_card_suit() -> None:
    st = table([["4S"], ["5S", "J*"], ["6T"]])
    GAME.apply(st, "play:4S")
    assert ids(st) == ["play:5S"]


def test_nw7_after_a_led_jack_at_no_trump_anyone_may_play_any_card() -> None:
    st = table([["J*"], ["5S", "KT"], ["6T"]])
    GAME.apply(st, "play:J*")
    assert ids(st) == ["play:5S", "play:KT"]


# W9, NW4, NW5, NW7, NW8 — the trick winner


def test_w9_nw7_a_led_jack_of_arrows_wins_at_no_trump() -> None:
    assert winning_card(["J*", "KS", "AS", "9S"]) == "J*"


def test_w9_nw7_a_following_jack_of_arrows_loses_at_no_trump() -> None:
    assert winning_card(["2S", "J*", "3T", "4N"]) == "2S"


def test_w9_a_trump_beats_the_led_suit() -> None:
    assert winning_card(["KS", "2T", "9S", "AS"], trump="T") == "2T"


def test_w9_without_trump_in_the_trick_the_led_suit_wins() -> None:
    assert winning_card(["5S", "9N", "KR", "6S"], trump="T") == "6S"


def test_w9_nw4_an_ace_with_its_king_in_the_trick_beats_the_king() -> None:
    assert winning_card(["KS", "AS", "9S", "2S"]) == "AS"
    assert winning_card(["AS", "9S", "KS", "2S"]) == "AS"


def test_w9_an_untriggered_ace_is_the_lowest_card() -> None:
    assert winning_card(["AS", "2S", "KT", "3N"]) == "2S"


def test_nw4_a_king_played_in_an_earlier_trick_does_not_trigger_the_ace() -> None:
    st = table([["AS", "KS"], ["3S", "5S"], ["4S", "6S"]])
    for card in ["KS", "3S", "4S", "AS", "5S", "6S"]:
        play(st, card)
    tricks = st.records[-1]["tricks"]
    assert [t["winner"] for t in tricks] == [0, 2]


def test_w9_jack_of_arrows_beats_the_king_of_trump() -> None:
    assert winning_card(["KS", "J*", "9S", "2S"], trump="S") == "J*"


def test_w9_nw5_jack_of_arrows_triggers_the_trump_ace() -> None:
    assert winning_card(["J*", "AS", "2T", "3T"], trump="S") == "AS"
    assert winning_card(["KS", "J*", "AS", "2S"], trump="S") == "AS"


def test_w9_nw5_jack_of_arrows_does_not_trigger_a_plain_ace() -> None:
    assert winning_card(["AT", "J*", "2T"], trump="S") == "J*"
    assert winning_card(["AS", "J*", "2S", "3T"]) == "2S"  # no trump: J* triggers nothing


def test_w9_nw8_boosted_cards_compare_face_plus_boost_as_integers() -> None:
    # 8 + 3 = 11 beats 9 + 1 = 10
    card = winning_card(["8S", "9S", "2S"], boosts={0: ["a", "aab"], 1: ["ab"]})
    assert card == "8S"


def test_w9_nw8_a_boosted_card_never_beats_the_king() -> None:
    card = winning_card(["9S", "KS", "2S"], boosts={0: ["a", "aa", "aab", "aac", "aad"]})
    assert card == "KS"


def test_w9_nw8_a_boosted_card_beats_an_untriggered_ace_and_loses_to_a_triggered_one() -> None:
    assert winning_card(["AS", "2S", "3S"], boosts={1: ["aa"]}) == "2S"
    assert winning_card(["AS", "9S", "KS"], boosts={1: ["aab"]}) == "AS"


def test_w9_nw8_equal_boosted_values_go_to_the_card_played_first() -> None:
    assert winning_card(["7S", "9S", "2S"], boosts={0: ["aa"]}) == "7S"
    assert winning_card(["9S", "7S", "2S"], boosts={1: ["aa"]}) == "9S"


def test_w9_a_boosted_led_card_still_loses_to_a_small_trump() -> None:
    assert winning_card(["9S", "2T", "3S"], trump="T", boosts={0: ["aab"]}) == "2T"


# W8, NW9, NW10, NW15 — boosts


def test_w8_nw10_only_tokens_with_the_cards_suit_icon_are_offered() -> None:
    areas = [["blank", "a", "b", "ab", "cd", "bba"], [], []]
    st = table([["5S"], ["6S"], ["7S"]], areas=areas)
    GAME.apply(st, "play:5S")
    assert st.phase == PHASE_ATTACH and st.actor == 0
    assert ids(st) == ["attach:a", "attach:ab", "attach:bba", "done"]


@pytest.mark.parametrize("card", ["AS", "KS", "J*"])
def test_w8_aces_kings_and_the_jack_take_no_tokens(card: str) -> None:
    st = table([[card], ["6S"], ["7S"]], trump="S", areas=[["a", "aa"], [], []])
    GAME.apply(st, f"play:{card}")
    assert st.actor == 1 and st.phase == PHASE_PLAY
    assert GAME.view(st, 1)["trick"] == [{"seat": 0, "card": card, "tokens": [], "boost": 0}]


def test_w8_without_an_attachable_token_the_play_is_published_at_once() -> None:
    st = table([["5S"], ["6S"], ["7S"]], areas=[["b", "cd"], [], []])
    GAME.apply(st, "play:5S")
    assert st.actor == 1 and GAME.view(st, 2)["trick"][0]["card"] == "5S"


def test_w8_boost_counts_matching_icons_and_the_last_attachable_token_publishes() -> None:
    st = table([["5S"], ["6S"], ["7S"]], areas=[["ab", "aab", "cd"], [], []])
    GAME.apply(st, "play:5S")
    GAME.apply(st, "attach:aab")
    assert st.actor == 0 and ids(st) == ["attach:ab", "done"]
    GAME.apply(st, "attach:ab")
    assert st.actor == 1  # no done asked: nothing left to attach
    view = GAME.view(st, 2)
    assert view["trick"] == [{"seat": 0, "card": "5S", "tokens": ["aab", "ab"], "boost": 3}]
    assert view["score_areas"][0]["tokens"] == ["cd"]
    assert view["scores"][0] == 2


def test_w8_w13_the_play_and_its_tokens_stay_private_until_done() -> None:
    st = table([["5S", "2R"], ["6S", "3R"], ["7S", "4R"]], areas=[["a", "ab"], [], []])
    before = GAME.view(st, 1)
    GAME.apply(st, "play:5S")
    GAME.apply(st, "attach:ab")
    other = GAME.view(st, 1)
    assert other["trick"] == [] and other["phase"] == "play" and other["to_act"] == 0
    assert other["score_areas"] == before["score_areas"] and other["scores"] == before["scores"]
    assert other["pending_card"] == "" and "5S" not in set(leaves(other))
    assert "5S" in GAME.hidden_cards(st, 1)
    mine = GAME.view(st, 0)
    assert mine["phase"] == "attach" and mine["pending_card"] == "5S"
    assert mine["pending_tokens"] == ["ab"] and mine["score_areas"][0]["tokens"] == ["a"]
    GAME.apply(st, "done")
    assert GAME.view(st, 1)["trick"][0] == {"seat": 0, "card": "5S", "tokens": ["ab"], "boost": 1}


def test_w8_labels_show_the_play_and_its_tokens_only_when_published() -> None:
    st = table([["5S", "2R"], ["6S", "3R"], ["7S", "4R"]], areas=[["a", "ab", "aab"], [], []])
    assert GAME.public_label(st, "play:5S") == "play"
    GAME.apply(st, "play:5S")
    assert GAME.public_label(st, "attach:ab") == "attach"
    assert GAME.public_label(st, "done") == "done; shows 5S"
    GAME.apply(st, "attach:ab")
    assert GAME.public_label(st, "done") == "done; shows 5S+ab"
    GAME.apply(st, "attach:a")
    # the last attachable token publishes the play
    assert GAME.public_label(st, "attach:aab") == "attach; shows 5S+ab+a+aab"
    GAME.apply(st, "attach:aab")
    assert GAME.public_label(st, "play:6S") == "play:6S"


def test_w8_nw9_spent_tokens_return_to_the_stock_before_the_award() -> None:
    # The stock is empty; the spent token goes back first, so the winner draws it.
    st = table([["5S", "2R"], ["6S", "3R"], ["7S", "4R"]], areas=[["a", "b"], ["c"], []], stock=[])
    play(st, "5S", "a")
    play(st, "6S")
    play(st, "7S")
    assert st.tricks[-1]["winner"] == 2 and st.tricks[-1]["token"] == "a"
    assert st.play_areas[2] == ["a"] and st.stock == []


def test_nw9_stock_size_grows_by_spent_tokens_less_the_award() -> None:
    areas = [["a", "aa", "ab"], [], []]
    st = table([["5S", "2R"], ["6S", "3R"], ["7S", "4R"]], areas=areas)
    size = len(st.stock)
    play(st, "5S", "a", "aa", "ab")
    play(st, "6S")
    play(st, "7S")
    assert st.tricks[-1]["winner"] == 0  # 5 + 4 = 9 beats 6 and 7
    assert GAME.view(st, 1)["stock_size"] == size + 3 - 1


def test_w8_w12_spent_tokens_cost_their_icons_in_the_round_points() -> None:
    st = table([["5S"], ["9S"], ["2S"]], areas=[["c", "aab"], [], []], bids=[1, 0, 0])
    before = GAME.scores(st)
    play(st, "5S", "aab")  # 5 + 2 = 7 still loses to 9
    play(st, "9S")
    play(st, "2S")
    record = st.records[-1]
    assert record["tricks_won"] == [0, 1, 0] and record["exact"] == [False, False, True]
    assert record["points"][0] == -3 and record["scores"][0] == before[0] - 3
    assert record["points"][2] == 10


def test_nw15_tokens_won_this_round_cannot_be_spent() -> None:
    st = table([["5S"], ["6S"], ["7S"]], areas=[["b"], [], []])
    st.play_areas[0] = ["a"]
    GAME.apply(st, "play:5S")
    assert st.actor == 1  # "a" sits in the play area, so no attach was offered


# W10, NW11 — the award


def test_w10_the_winner_draws_a_random_stock_token_made_public() -> None:
    st = table([["2S", "3R"], ["9S", "4R"], ["5S", "6R"]])
    play(st, "2S")
    play(st, "9S")
    play(st, "5S")
    token = st.tricks[-1]["token"]
    assert token in TOKENS and st.play_areas[1] == [token] and len(st.stock) == 30
    view = GAME.view(st, 0)
    assert view["play_areas"][1]["tokens"] == [token]
    assert view["tricks"][-1]["token"] == token and view["tricks"][-1]["taken_from"] == -1


def test_w10_stock_draws_are_seeded_by_the_match_position() -> None:
    tokens = set()
    for seed in range(5):
        a = GAME.new_match(seed, 4)
        b = GAME.new_match(seed, 4)
        finish_with_first_legal(a)
        finish_with_first_legal(b)
        got = [t["token"] for r in GAME.hand_records(a) for t in r["tricks"]]
        assert got == [t["token"] for r in GAME.hand_records(b) for t in r["tricks"]]
        tokens.add(tuple(got[:5]))
    assert len(tokens) > 1


def test_w10_nw11_a_unique_leader_with_an_empty_stock_takes_his_own_token() -> None:
    areas = [["a", "b", "c"], ["d", "aa"], ["bb"]]
    st = table([["9S", "2R"], ["2S", "3R"], ["5S", "4R"]], areas=areas, stock=[])
    play(st, "9S")
    play(st, "2S")
    play(st, "5S")
    assert st.actor == 0 and GAME.view(st, 1)["phase"] == "take"
    assert ids(st) == ["take:a", "take:b", "take:c"]
    GAME.apply(st, "take:b")
    assert st.score_areas[0] == ["a", "c"] and st.play_areas[0] == ["b"]
    assert st.tricks[-1]["token"] == "b" and st.tricks[-1]["taken_from"] == 0
    assert st.actor == 0 and st.phase == PHASE_PLAY


def test_w10_nw11_otherwise_the_winner_takes_from_another_player_with_the_most() -> None:
    areas = [["a"], ["d", "aa"], ["bb", "cc"], ["ab"]]
    st = table([["9S", "2R"], ["2S", "3R"], ["5S", "4R"], ["6S", "5R"]], areas=areas, stock=[])
    for c in ["9S", "2S", "5S", "6S"]:
        play(st, c)
    assert st.actor == 0
    assert ids(st) == ["take:1:d", "take:1:aa", "take:2:bb", "take:2:cc"]
    GAME.apply(st, "take:2:cc")
    assert st.score_areas[2] == ["bb"] and st.play_areas[0] == ["cc"]
    assert GAME.view(st, 3)["tricks"][-1]["taken_from"] == 2


def test_w10_nw11_a_winner_tied_for_the_most_must_take_from_the_other_leader() -> None:
    areas = [["a", "b"], ["d", "aa"], ["bb"]]
    st = table([["9S", "2R"], ["2S", "3R"], ["5S", "4R"]], areas=areas, stock=[])
    for c in ["9S", "2S", "5S"]:
        play(st, c)
    assert ids(st) == ["take:1:d", "take:1:aa"]


# W11, W12, NW12, NW14 — scoring


def test_w11_nw12_nw14_exact_bidders_gain_a_score_token_and_tokens_move_to_score_areas() -> None:
    st = table([["9S", "8S"], ["2S", "3S"], ["5S", "4S"]], bids=[2, 1, 0], stock=["a", "bb", "ccd"])
    for c in ["9S", "2S", "5S", "8S", "3S", "4S"]:
        play(st, c)
    record = st.records[-1]
    assert record["tricks_won"] == [2, 0, 0]
    assert record["exact"] == [True, False, True]
    assert st.score_tokens == [1, 0, 1]
    assert sorted(st.score_areas[0]) == sorted(record["won_tokens"][0])
    assert len(st.score_areas[0]) == 2 and st.play_areas == [[], [], []]
    icons = sum(ICONS[t] for t in st.score_areas[0])
    assert record["points"] == [10 + icons, 0, 10]
    assert GAME.scores(st) == [10 + icons, 0, 10]


def test_w12_final_score_is_ten_per_score_token_plus_icons_and_ties_share() -> None:
    last = len(schedule(3, False)) - 1
    areas = [["a"], ["ab", "abc"], ["blank", "aa", "ab"]]
    st = table(
        [["KS"], ["2S"], ["3S"]],
        trump="T",
        bids=[1, 0, 1],
        areas=areas,
        stock=["bcd"],
        round_index=last,
    )
    st.score_tokens = [2, 3, 3]
    st.start_scores = GAME.scores(st)
    for c in ["KS", "2S", "3S"]:
        play(st, c)
    assert GAME.is_over(st) and GAME.view(st, 0)["to_act"] == -1
    assert GAME.scores(st) == [30 + 1 + 3, 40 + 5, 30 + 4]
    result = GAME.result(st)
    assert result.ranks == (2, 1, 2)
    with pytest.raises(IllegalActionError):
        GAME.apply(st, "bid:0")


def test_w12_the_match_ends_after_the_last_round_only() -> None:
    st = GAME.new_match(SEED, 6)
    finish_with_first_legal(st)
    assert GAME.is_over(st) and len(GAME.hand_records(st)) == 11
    assert GAME.scores(st) == GAME.hand_records(st)[-1]["scores"]


# W13 — visibility and resampling


def test_w13_a_view_shows_own_hand_and_public_state_but_no_other_hand() -> None:
    st = GAME.new_match(SEED, 4)
    while st.round_index < 3:
        GAME.apply(st, GAME.legal_actions(st)[0])
    for seat in range(4):
        view = GAME.view(st, seat)
        assert view["hand"] == st.hands[seat]
        assert not GAME.hidden_cards(st, seat) & set(leaves(view))
        assert view["stock_size"] == len(st.stock) and view["turned"] == st.turned
        assert view["score_tokens"] == st.score_tokens


def test_w13_resample_respects_shown_voids() -> None:
    hands = [["2S", "AR", "2R"], ["3T", "4T", "5N"], ["4S", "6S", "7T"], ["8S", "9T", "KN"]]
    st = table(hands)
    play(st, "2S")
    play(st, "3T")  # seat 1 shows a Sword void
    rng = random.Random(5)
    changed = 0
    for _ in range(30):
        alt = GAME.resample(st, 0, rng)
        assert GAME.view(alt, 0) == GAME.view(st, 0)
        assert not any(c[1] == "S" for c in alt.hands[1])
        changed += alt.hands != st.hands
    assert changed > 20


def test_w13_resample_keeps_a_pending_card_coherent() -> None:
    hands = [["2R", "3R"], ["5S", "6T"], ["4R", "7T"]]
    st = table(hands, areas=[[], ["a", "ab", "cd"], []], leader=1)
    GAME.apply(st, "play:5S")
    GAME.apply(st, "attach:a")
    assert st.phase == PHASE_ATTACH
    rng = random.Random(9)
    pendings = set()
    for _ in range(40):
        alt = GAME.resample(st, 2, rng)
        assert GAME.view(alt, 2) == GAME.view(st, 2)
        card = alt.pending_card
        assert card[0] in "23456789" and card[1] == "S"  # "a" was attached: a Sword card
        assert [a.id for a in GAME.legal_actions(alt)] == ["attach:ab", "done"]
        pendings.add(card)
        GAME.apply(alt, "done")
        assert alt.trick_cards == [card]
    assert len(pendings) > 1
