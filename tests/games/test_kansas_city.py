"""Kansas City scenarios, one or more per rule and ruling of RULINGS §5 (C1–C9, KC1–KC10)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from games.base import Action
from games.errors import IllegalActionError
from games.kansas_city import DECK, GAME, NUM, KansasCityState
from tests.games.contract import leaves


def ids(state: KansasCityState) -> list[str]:
    """The legal action ids now."""
    return [a.id for a in GAME.legal_actions(state)]


def make(
    hands: list[list[str]],
    *,
    leader: int = 0,
    trumps: list[list[str]] | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 1,
) -> KansasCityState:
    """A hand in its play phase with the given plain cards and upgraded cards per seat."""
    n = len(hands)
    state = GAME.new_match(seed, n, options)
    state.dealer = (leader - 1) % n
    state.hands = [sorted(h, key=DECK.index) for h in hands]
    state.trumps = [list(t) for t in trumps] if trumps else [[] for _ in range(n)]
    state.passed = [[] for _ in range(n)]
    state.held = [False] * 9
    for t in state.trumps:
        for c in t:
            state.held[NUM[c]] = True
            state.upgraded_at[c] = 0
    state.phase = "play"
    state.leader = leader
    state.legal_cache = None
    return state


def play(state: KansasCityState, *action_ids: str) -> None:
    """Apply each action id in turn."""
    for action_id in action_ids:
        GAME.apply(state, action_id)


def pass_all(state: KansasCityState) -> None:
    """Every seat passes its first three cards."""
    while state.phase == "pass":
        GAME.apply(state, GAME.legal_actions(state)[0])


# C1 / C2 / KC8: the deck and the deal


def test_c1_deck_is_seven_suits_numbered_one_to_eight() -> None:
    assert len(DECK) == len(set(DECK)) == 56
    assert Counter(c[1] for c in DECK) == {s: 8 for s in "ROYGBPK"}
    assert Counter(NUM[c] for c in DECK) == {n: 7 for n in range(1, 9)}


def test_c2_four_players_are_dealt_fourteen_each_and_nothing_is_set_aside() -> None:
    state = GAME.new_match(5, 4)
    assert [len(h) for h in state.hands] == [14] * 4
    assert sorted(c for h in state.hands for c in h) == sorted(DECK)
    assert GAME.view(state, 0)["missing"] == ""


def test_c2_kc8_five_players_get_eleven_each_and_the_56th_card_is_public() -> None:
    state = GAME.new_match(5, 5)
    assert [len(h) for h in state.hands] == [11] * 5
    dealt = {c for h in state.hands for c in h}
    (missing,) = set(DECK) - dealt
    assert all(GAME.view(state, s)["missing"] == missing for s in range(5))
    assert missing not in GAME.hidden_cards(state, 0)


def test_c2_the_deal_depends_only_on_seed_and_hand_number() -> None:
    a, b = GAME.new_match(77, 4), GAME.new_match(77, 4, {"numbers_public": False})
    assert a.hands == b.hands
    assert GAME.new_match(78, 4).hands != a.hands


# C3 / KC2: the pass


def test_c3_each_seat_passes_three_cards_in_turn_from_the_dealers_left() -> None:
    state = GAME.new_match(3, 4)
    first = (state.dealer + 1) % 4
    order = []
    while state.phase == "pass":
        order.append(GAME.to_act(state))
        assert all(i.startswith("pass:") for i in ids(state))
        GAME.apply(state, GAME.legal_actions(state)[-1])
    assert order == [(first + k // 3) % 4 for k in range(12)]


def test_c3_passed_cards_go_to_the_left_neighbour() -> None:
    state = GAME.new_match(3, 4)
    dealt = [list(h) for h in state.hands]
    passes: dict[int, list[str]] = {}
    while state.phase == "pass":
        seat = GAME.to_act(state)
        assert seat is not None
        card = GAME.legal_actions(state)[0].card
        passes.setdefault(seat, []).append(card)
        GAME.apply(state, f"pass:{card}")
    for seat in range(4):
        left = (seat + 1) % 4
        assert set(passes[seat]) <= set(state.hands[left])
        assert not set(passes[seat]) & set(state.hands[seat])
        expected = (set(dealt[left]) - set(passes[left])) | set(passes[seat])
        assert set(state.hands[left]) == expected


def test_c3_kc2_passes_stay_private_until_every_seat_has_passed() -> None:
    state = GAME.new_match(3, 4)
    first = GAME.to_act(state)
    assert first is not None
    other = (first + 2) % 4
    dealt_numbers = sorted(NUM[c] for c in state.hands[first])
    play(state, *ids(state)[:1])
    play(state, *ids(state)[:2])
    mine = GAME.view(state, first)
    assert len(mine["passed"]) == 3 and mine["received"] == [] and mine["passes"] == []
    theirs = GAME.view(state, other)
    assert theirs["players"][first]["numbers"] == dealt_numbers
    assert theirs["players"][first]["hand_size"] == 14
    assert theirs["passes"] == [] and not set(mine["passed"]) & set(leaves(theirs))


def test_c3_c9_after_the_pass_receiver_sees_faces_everyone_sees_numbers_and_direction() -> None:
    state = GAME.new_match(3, 4)
    pass_all(state)
    passed = [list(p) for p in state.passed]
    for seat in range(4):
        view = GAME.view(state, seat)
        assert view["passed"] == passed[seat]
        assert view["received"] == passed[(seat - 1) % 4]
        assert view["passes"] == [
            {"seat": p, "to_seat": (p + 1) % 4, "numbers": sorted(NUM[c] for c in passed[p])}
            for p in range(4)
        ]
        strangers = {c for p in range(4) if p not in (seat, (seat - 1) % 4) for c in passed[p]}
        assert not strangers & set(leaves(view))


def test_kc2_received_cards_cannot_be_passed_on() -> None:
    state = GAME.new_match(11, 4)
    first = GAME.to_act(state)
    assert first is not None
    given = [a.card for a in GAME.legal_actions(state)[:3]]
    play(state, *(f"pass:{c}" for c in given))
    assert GAME.to_act(state) == (first + 1) % 4
    assert not set(given) & {a.card for a in GAME.legal_actions(state)}
    with pytest.raises(IllegalActionError):
        GAME.apply(state, f"pass:{given[0]}")


# C4 / KC6: leading and following


def test_c4_the_dealers_left_leads_trick_one() -> None:
    for seed in range(4):
        state = GAME.new_match(seed, 4)
        pass_all(state)
        assert state.phase == "play"
        assert GAME.to_act(state) == (state.dealer + 1) % 4
        assert GAME.view(state, 0)["leader"] == (state.dealer + 1) % 4


def test_c4_follow_the_led_printed_suit_if_able() -> None:
    state = make([["5R", "1G"], ["2R", "8G"], ["3Y", "4Y"], ["6R", "7R"]], leader=0)
    play(state, "play:5R")
    assert GAME.view(state, 3)["led"] == "red"
    assert ids(state) == ["play:2R"]
    play(state, "play:2R")
    assert ids(state) == ["play:3Y", "play:4Y"]
    play(state, "play:3Y")
    assert ids(state) == ["play:6R", "play:7R"]


def test_c4_a_void_player_may_play_any_card_including_trump() -> None:
    state = make(
        [["5R", "1G"], ["2G", "8G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[[], ["1B"], [], []],
        leader=0,
    )
    play(state, "play:5R")
    assert ids(state) == ["play:2G", "play:8G", "play:T1"]


def test_c4_an_upgraded_card_has_no_printed_suit_for_following() -> None:
    state = make(
        [["5R", "1G"], ["2G", "8G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[[], ["3R"], [], []],
        leader=0,
    )
    play(state, "play:5R")
    # the upgraded red 3 does not oblige (or allow) seat 1 to "follow" red
    assert ids(state) == ["play:2G", "play:8G", "play:T3"]
    play(state, "play:T3")
    assert GAME.view(state, 2)["trick"] == [
        {"seat": 0, "card": "5R"},
        {"seat": 1, "card": "T3"},
    ]


def test_c4_trump_may_be_led_and_kc6_then_trump_must_be_played_if_held() -> None:
    state = make(
        [["5R", "1G"], ["2R", "8G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[["2B"], ["5K"], [], ["8O"]],
        leader=0,
    )
    assert "play:T2" in ids(state)
    play(state, "play:T2")
    assert GAME.view(state, 1)["led"] == "trump"
    assert ids(state) == ["play:T5"]
    play(state, "play:T5")
    # KC6: without a trump any card may be played
    assert ids(state) == ["play:3Y", "play:4Y"]
    play(state, "play:4Y")
    assert ids(state) == ["play:T8"]


# C5: the winner


def test_c5_highest_of_the_led_suit_wins_without_trump_and_leads_next() -> None:
    state = make([["5R", "1G"], ["2R", "8G"], ["8Y", "4Y"], ["6R", "7R"]], leader=0)
    play(state, "play:5R", "play:2R", "play:8Y", "play:7R")
    assert state.tricks[-1].winner == 3
    assert state.tricks_won == [0, 0, 0, 1]
    while state.phase == "upgrade":
        play(state, "none")
    assert GAME.to_act(state) == 3


def test_c5_the_highest_trump_wins_even_a_low_one_over_a_high_plain() -> None:
    state = make(
        [["5R", "1G"], ["2G", "8G"], ["3Y", "4Y"], ["6G", "7R"]],
        trumps=[[], ["1B"], ["2K"], []],
        leader=0,
    )
    play(state, "play:5R", "play:T1", "play:T2", "play:7R")
    assert state.tricks[-1].winner == 2


# C6 / KC4 / KC5: upgrades


def test_c6_upgrades_go_clockwise_from_the_winners_left_and_skip_the_winner() -> None:
    state = make(
        [["5R", "1G", "3G"], ["2R", "8G", "4G"], ["8R", "4Y", "6Y"], ["6R", "7R", "7Y"]],
        leader=0,
    )
    play(state, "play:5R", "play:2R", "play:8R", "play:6R")
    assert state.tricks[-1].winner == 2
    order = []
    while state.phase == "upgrade":
        order.append(GAME.to_act(state))
        play(state, "none")
    assert order == [3, 0, 1]
    assert GAME.to_act(state) == 2


def test_c6_an_upgraded_card_becomes_a_public_trump_of_the_same_number() -> None:
    state = make(
        [["5R", "1G", "3G"], ["2R", "8G", "4G"], ["8R", "4Y", "6Y"], ["6R", "7R", "7Y"]],
        leader=0,
    )
    play(state, "play:5R", "play:2R", "play:8R", "play:6R")
    assert ids(state) == ["upgrade:7R", "upgrade:7Y", "none"]
    play(state, "upgrade:7Y")
    mine, theirs = GAME.view(state, 3), GAME.view(state, 0)
    assert mine["trumps"] == ["7Y"] and mine["hand"] == ["7R"]
    assert theirs["players"][3]["trump_numbers"] == [7]
    assert theirs["players"][3]["numbers"] == [7]
    assert theirs["held_trumps"] == [7]
    assert theirs["tricks"][-1]["upgrades"] == [{"seat": 3, "number": 7}]
    assert "7Y" not in set(leaves(theirs)) and "7Y" in GAME.hidden_cards(state, 0)


def test_c6_kc4_a_number_held_as_trump_cannot_be_upgraded() -> None:
    state = make(
        [["5R", "1G", "3G"], ["2R", "8G", "4G"], ["8R", "4Y", "6Y"], ["6R", "7R", "7Y"]],
        trumps=[[], ["3B"], [], []],
        leader=0,
    )
    play(state, "play:5R", "play:2R", "play:8R", "play:6R")
    play(state, "upgrade:7R")
    assert GAME.to_act(state) == 0
    # 3 is held by seat 1: seat 0 may only upgrade its green 1
    assert ids(state) == ["upgrade:1G", "none"]
    play(state, "none")
    assert GAME.to_act(state) == 1
    # seat 1 holds the trump 3 itself; its 4 and 8 are free
    assert ids(state) == ["upgrade:4G", "upgrade:8G", "none"]


def test_kc4_a_played_trump_frees_its_number() -> None:
    state = make(
        [["5R", "3G"], ["2R", "4G"], ["8R", "4Y"], ["6R", "3K"]],
        trumps=[["3B"], [], [], []],
        leader=0,
    )
    play(state, "play:T3", "play:2R", "play:8R", "play:6R")
    assert state.tricks[-1].winner == 0
    assert GAME.view(state, 1)["held_trumps"] == []
    assert GAME.to_act(state) == 1
    play(state, "none")
    assert ids(state) == ["upgrade:4Y", "none"]
    play(state, "none")
    assert ids(state) == ["upgrade:3K", "none"]


def test_c6_with_no_eligible_card_none_is_automatic() -> None:
    state = make(
        [["5R", "3G"], ["2R", "3Y"], ["8R", "4Y"], ["6R", "3K"]],
        trumps=[[], [], [], []],
        leader=0,
    )
    play(state, "play:5R", "play:2R", "play:8R", "play:6R")
    assert GAME.to_act(state) == 3
    # seat 3 upgrades its 3; seats 0 and 1 then hold only a 3 and are skipped without a decision
    play(state, "upgrade:3K")
    assert state.phase == "play" and GAME.to_act(state) == 2
    assert state.history[-1] == "upgrade:3K"


def test_c6_kc5_at_most_one_upgrade_per_player_per_trick() -> None:
    state = make(
        [["5R", "1G", "3G"], ["2R", "8G", "4G"], ["8R", "4Y", "6Y"], ["6R", "7R", "7Y"]],
        leader=0,
    )
    play(state, "play:5R", "play:2R", "play:8R", "play:6R", "upgrade:7R")
    assert GAME.to_act(state) == 0
    play(state, "upgrade:1G", "upgrade:8G")
    assert state.phase == "play" and GAME.to_act(state) == 2
    assert GAME.view(state, 2)["players"][0]["trump_numbers"] == [1]


def test_c6_kc5_the_winner_never_upgrades_and_none_after_the_last_trick() -> None:
    state = make([["5R"], ["2R"], ["8R"], ["6R"]], leader=0, options={"hands": 2})
    play(state, "play:5R", "play:2R", "play:8R", "play:6R")
    assert state.hand_number == 1 and state.phase == "pass"
    assert not any(i.startswith("upgrade") or i == "none" for i in state.history)


def test_c6_no_upgrades_before_trick_one() -> None:
    state = GAME.new_match(9, 4)
    pass_all(state)
    assert state.phase == "play"
    assert all(i.startswith("play:") for i in ids(state))


# C7 / KC7 / KC10: scoring


@pytest.mark.parametrize(
    ("won", "points"), [(0, 0), (1, 5), (2, 10), (3, 15), (4, 5), (5, 0), (7, 0)]
)
def test_c7_four_player_trick_chart(won: int, points: int) -> None:
    state = make([["5R"], ["2R"], ["8Y"], ["6Y"]], leader=0)
    state.tricks_won = [won - 1, 0, 0, 0]
    play(state, "play:5R", "play:2R", "play:8Y", "play:6Y")
    assert state.records[-1]["tricks_won"][0] == won
    assert state.records[-1]["points"][0] == points
    assert GAME.scores(state)[0] == points


@pytest.mark.parametrize(("won", "points"), [(0, 0), (1, 5), (2, 10), (3, 5), (4, 0), (6, 0)])
def test_c7_kc10_five_player_trick_chart(won: int, points: int) -> None:
    state = make([["5R"], ["2R"], ["8Y"], ["6Y"], ["1Y"]], leader=0)
    state.tricks_won = [won - 1, 0, 0, 0, 0]
    play(state, "play:5R", "play:2R", "play:8Y", "play:6Y", "play:1Y")
    assert state.records[-1]["points"][0] == points


def test_c7_kc7_each_captured_four_scores_two_trump_fours_included() -> None:
    state = make(
        [["4R", "1G"], ["8G"], ["4Y", "3Y"], ["6R", "4G"]],
        trumps=[[], ["4K"], [], []],
        leader=0,
    )
    play(state, "play:4R", "play:T4", "play:4Y", "play:6R")
    assert state.tricks[-1].winner == 1
    assert GAME.view(state, 0)["fours"] == [0, 3, 0, 0]
    play(state, "none", "none", "none")
    play(state, "play:8G", "play:3Y", "play:4G", "play:1G")
    assert state.records[-1]["fours"] == [0, 4, 0, 0]
    # two tricks (10) and four 4s (8)
    assert state.records[-1]["points"] == [0, 18, 0, 0]


def test_c7_kc7_fours_score_for_whoever_captures_them() -> None:
    state = make([["4R"], ["2R"], ["8R"], ["4Y"]], leader=0)
    play(state, "play:4R", "play:2R", "play:8R", "play:4Y")
    assert state.records[-1]["points"] == [0, 0, 5 + 4, 0]


# C8 / KC9: dealer and match length


def test_c8_first_dealer_is_seeded_and_the_dealer_moves_left() -> None:
    dealers = {GAME.new_match(seed, 4).dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}
    state = GAME.new_match(2, 4, {"hands": 4})
    first = state.dealer
    seen: list[tuple[int, int]] = []
    rng = random.Random(0)
    while GAME.to_act(state) is not None:
        if not seen or seen[-1] != (state.hand_number, state.dealer):
            seen.append((state.hand_number, state.dealer))
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    assert seen == [(k, (first + k) % 4) for k in range(4)]
    assert [r["dealer"] for r in GAME.hand_records(state)] == [(first + k) % 4 for k in range(4)]


@pytest.mark.parametrize(("seats", "options", "hands"), [(4, {}, 3), (5, {"hands": 5}, 5)])
def test_c8_kc9_the_match_lasts_the_given_number_of_hands(
    seats: int, options: dict[str, Any], hands: int
) -> None:
    state = GAME.new_match(4, seats, options)
    rng = random.Random(1)
    decisions = 0
    while GAME.to_act(state) is not None:
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
        decisions += 1
    records = GAME.hand_records(state)
    assert len(records) == hands
    assert GAME.scores(state) == [sum(r["points"][p] for r in records) for p in range(seats)]
    assert records[-1]["scores"] == GAME.scores(state)
    assert decisions <= GAME.decision_bound(seats, state.options)
    assert GAME.view(state, 0)["to_act"] == -1


def test_c8_decision_bound_counts_passes_plays_and_upgrade_chances() -> None:
    assert GAME.decision_bound(4, {"hands": 3, "numbers_public": True}) == 3 * (12 + 56 + 39)
    assert GAME.decision_bound(5, {"hands": 1, "numbers_public": True}) == 15 + 55 + 40


def test_0_7_equal_scores_share_a_placement() -> None:
    state = make([["5R"], ["2R"], ["8Y"], ["6Y"]], leader=0, options={"hands": 1})
    play(state, "play:5R", "play:2R", "play:8Y", "play:6Y")
    assert GAME.result(state).scores == (5, 0, 0, 0)
    assert GAME.result(state).ranks == (1, 2, 2, 2)


# C9 / KC1 / KC3: visibility


def test_c9_kc1_every_hand_shows_its_numbers_and_trumps_but_never_suits() -> None:
    state = make(
        [["5R", "1G"], ["2R", "8G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[[], ["3B"], [], []],
        leader=0,
    )
    view = GAME.view(state, 0)
    assert view["hand"] == ["5R", "1G"]
    assert view["players"][1] == {
        "seat": 1,
        "hand_size": 3,
        "numbers": [2, 8],
        "trump_numbers": [3],
    }
    assert not {"2R", "8G", "3B", "3Y", "4Y", "6R", "7R"} & set(leaves(view))
    assert GAME.hidden_cards(state, 0) == {"2R", "8G", "3B", "3Y", "4Y", "6R", "7R"}


def test_kc1_numbers_public_off_shows_only_hand_sizes_and_trump_numbers() -> None:
    state = make(
        [["5R", "1G"], ["2R", "8G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[[], ["3B"], [], []],
        leader=0,
        options={"numbers_public": False},
    )
    view = GAME.view(state, 0)
    assert view["numbers_public"] is False
    assert view["players"][0]["numbers"] == [1, 5]
    assert view["players"][1] == {"seat": 1, "hand_size": 3, "numbers": [], "trump_numbers": [3]}


def test_kc1_numbers_public_off_hides_pass_numbers() -> None:
    state = GAME.new_match(3, 4, {"numbers_public": False})
    pass_all(state)
    view = GAME.view(state, 0)
    assert [p["numbers"] for p in view["passes"]] == [[]] * 4
    assert len(view["received"]) == 3


def test_c9_kc3_a_played_trump_shows_only_its_number_forever() -> None:
    state = make(
        [["5R", "1G"], ["2G"], ["3Y", "4Y"], ["6R", "7R"]],
        trumps=[[], ["3R"], [], []],
        leader=0,
        options={"hands": 1},
    )
    play(state, "play:5R", "play:T3", "play:3Y", "play:6R")
    for seat in (0, 2, 3):
        view = GAME.view(state, seat)
        assert view["tricks"][0]["plays"][1] == {"seat": 1, "card": "T3"}
        assert "3R" not in set(leaves(view))
        assert "3R" in GAME.hidden_cards(state, seat)
    assert "3R" not in GAME.hidden_cards(state, 1)
    play(state, "none", "none", "none")
    play(state, "play:2G", "play:4Y", "play:7R", "play:1G")
    assert GAME.to_act(state) is None
    record = GAME.hand_records(state)[0]
    assert "3R" not in set(leaves(record))
    assert record["tricks"][0]["plays"][1] == {"seat": 1, "card": "T3"}
    for seat in (0, 2, 3):
        assert "3R" not in set(leaves(GAME.view(state, seat)))


def test_0_6_kc3_hand_record_holds_only_what_was_public() -> None:
    state = GAME.new_match(21, 4, {"hands": 1})
    rng = random.Random(3)
    upgraded: set[str] = set()
    while GAME.to_act(state) is not None:
        action = rng.choice(GAME.legal_actions(state))
        if action.kind == "upgrade":
            upgraded.add(action.card)
        GAME.apply(state, action)
    assert upgraded
    (record,) = GAME.hand_records(state)
    strings = set(leaves(record))
    assert not upgraded & strings
    assert set(record) >= {"dealt", "passes", "tricks", "points", "scores", "missing"}
    assert [len(d["numbers"]) for d in record["dealt"]] == [14] * 4
    json.dumps(record)


def test_c9_a_passer_still_knows_the_faces_he_passed() -> None:
    state = GAME.new_match(3, 4)
    pass_all(state)
    for seat in range(4):
        passed = set(state.passed[seat])
        assert passed <= set(GAME.view(state, seat)["passed"])
        assert not passed & GAME.hidden_cards(state, seat)
        assert passed <= GAME.hidden_cards(state, (seat + 2) % 4)


# Resampling what a seat cannot see


def test_resample_permutes_only_suits_and_keeps_trumps_and_passes() -> None:
    state = GAME.new_match(8, 4)
    rng = random.Random(5)
    while len(state.tricks) < 6:
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    seat = 2
    left = 3
    changed = 0
    for k in range(20):
        alt = GAME.resample(state, seat, random.Random(k))
        assert GAME.view(alt, seat) == GAME.view(state, seat)
        for p in range(4):
            assert sorted(NUM[c] for c in alt.hands[p]) == sorted(NUM[c] for c in state.hands[p])
            assert sorted(NUM[c] for c in alt.trumps[p]) == sorted(NUM[c] for c in state.trumps[p])
        held_by_left = set(alt.hands[left]) | set(alt.trumps[left])
        held_by_left |= {
            c
            for t in alt.tricks
            for j, c in enumerate(t.cards)
            if (t.leader + j) % 4 == left and t.shown[j][0] == "T"
        }
        gone = {c for t in alt.tricks for c in t.cards}
        assert {c for c in alt.passed[seat] if c not in gone or c in held_by_left} <= held_by_left
        for p in range(4):
            for suit in alt.void[p]:
                assert not any(c[1] == suit for c in alt.hands[p])
        changed += alt.hands != state.hands
    assert changed >= 15


def test_resample_respects_a_shown_void() -> None:
    state = make(
        [["5R", "1G"], ["2G", "8G"], ["3Y", "4R"], ["6R", "7R"]],
        leader=0,
    )
    play(state, "play:5R", "play:2G", "play:4R", "play:7R")
    assert state.void[1] == {"R": 1}
    for k in range(30):
        alt = GAME.resample(state, 0, random.Random(k))
        assert all(c[1] != "R" for c in alt.hands[1])


def test_resample_during_the_pass_keeps_everyone_s_numbers() -> None:
    state = GAME.new_match(8, 4)
    play(state, *ids(state)[:2])
    seat = GAME.to_act(state)
    assert seat is not None
    alt = GAME.resample(state, (seat + 1) % 4, random.Random(1))
    assert GAME.view(alt, (seat + 1) % 4) == GAME.view(state, (seat + 1) % 4)
    assert len(alt.passed[seat]) == 2
    assert alt.hands != state.hands


def test_actions_have_stable_ids_and_typed_fields() -> None:
    state = make(
        [["5R", "1G"], ["2G", "8G"], ["3Y", "4R"], ["6R", "7R"]],
        trumps=[["2B"], [], [], []],
        leader=0,
    )
    fields = [a.fields() for a in GAME.legal_actions(state)]
    assert {"id": "play:T2", "kind": "play", "card": "T2", "number": 2} in fields
    assert {"id": "play:5R", "kind": "play", "card": "5R"} in fields
    universe = GAME.all_action_ids(state)
    assert len(universe) == len(set(universe)) == 56 * 3 + 8 + 1
    assert isinstance(GAME.legal_actions(state)[0], Action)


def test_kc3_public_labels_never_show_a_passed_or_upgraded_face() -> None:
    """A pass shows nothing until the last one, which shows the passes as they are published
    (each seat's numbers, sorted); an upgrade shows only its number."""
    state = GAME.new_match(3)
    rng = random.Random(3)
    labels = []
    while GAME.to_act(state) is not None:
        action = rng.choice(GAME.legal_actions(state))
        labels.append((action.id, GAME.public_label(state, action.id)))
        GAME.apply(state, action)
        if labels[-1][1].startswith("pass; "):
            published = GAME.view(state, 0)["passes"]
            assert labels[-1][1] == "pass; shows " + " ".join(
                f"{p['seat']}>{p['to_seat']}:" + ",".join(map(str, p["numbers"])) for p in published
            )
    for i, (action_id, label) in enumerate(labels):
        kind, _, card = action_id.partition(":")
        if kind == "pass":
            last = labels[i + 1][0].startswith("play:")
            assert label.startswith("pass; shows ") if last else label == "pass", (action_id, label)
        elif kind == "upgrade":
            assert label == f"upgrade:{card[0]}", (action_id, label)
        else:
            assert label == action_id
    assert sum(label.startswith("pass; shows ") for _, label in labels) == 3  # one per hand
    assert any(a.startswith("upgrade:") for a, _ in labels)


def test_kc3_the_full_table_replay_masks_upgraded_faces_from_the_deal_on() -> None:
    state = GAME.new_match(3)
    rng = random.Random(3)
    while not GAME.sealed_cards(state):
        GAME.apply(state, rng.choice(GAME.legal_actions(state)))
    sealed = GAME.sealed_cards(state)
    (card,) = sealed
    seat = next(p for p in range(4) if card in state.trumps[p])
    view = GAME.sealed_view(state, seat, sealed)
    assert card not in view["trumps"] and f"{card[0]}?" in view["trumps"]
    assert GAME.sealed_action(f"upgrade:{card}", sealed) == f"upgrade:{card[0]}?"
    assert GAME.sealed_action("play:T3", sealed) == "play:T3"
    before = GAME.new_match(3)
    dealt = next(p for p in range(4) if card in before.hands[p])
    hand = GAME.sealed_view(before, dealt, sealed)["hand"]
    assert card not in hand and hand[-1] == f"{card[0]}?"  # not in its suit's place
