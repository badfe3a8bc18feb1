"""Knaves: 3-player trick-taking where each trick scores +1 and captured Jacks cost (RULINGS §2)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from typing_extensions import override

from games.base import (
    Action,
    Game,
    GameSpec,
    HandRecord,
    MatchState,
    OptionValue,
    View,
    shared_view,
    with_own_cards,
)
from games.cards import rank_value, seeded_rng, shuffle, standard_deck

SEATS: Final = 3
TARGET: Final = 20
MAX_DEALS: Final = 9
JACK_PENALTY: Final = {"JH": 4, "JD": 3, "JC": 2, "JS": 1}
DECK: Final = standard_deck()
RANK: Final = {card: rank_value(card) for card in DECK}
PLAY: Final = {card: Action(id=f"play:{card}", kind="play", card=card) for card in DECK}

SPEC: Final = GameSpec(
    name="knaves",
    title="Knaves",
    seat_counts=(3,),
    default_seats=3,
    options=(),
    move_ms=1000,
    summary="3 players, 17 cards each, a turned-up trump; +1 per trick, captured Jacks cost 1-4.",
)


@dataclass
class KnavesState(MatchState):
    """A Knaves match in progress."""

    dealer: int = 0
    deal_number: int = 0
    hands: list[list[str]] = field(default_factory=list)
    dealt: list[list[str]] = field(default_factory=list)
    turned: str = ""
    leader: int = 0
    trick: list[str] = field(default_factory=list)
    tricks: list[dict[str, Any]] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=list)
    penalties: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    records: list[HandRecord] = field(default_factory=list)
    void: list[set[str]] = field(default_factory=list)
    over: bool = False


class Knaves(Game[KnavesState]):
    """The Knaves rules engine."""

    spec = SPEC

    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> KnavesState:
        state = KnavesState(seed=seed, seats=seats, options=options, totals=[0] * SEATS)
        state.dealer = seeded_rng(seed, "first-dealer").randrange(SEATS)
        self._deal(state)
        return state

    def _deal(self, state: KnavesState) -> None:
        deck = list(DECK)
        shuffle(deck, seeded_rng(state.seed, "deal", state.deal_number))
        state.hands = [sorted(deck[17 * p : 17 * p + 17], key=DECK.index) for p in range(SEATS)]
        state.dealt = [list(h) for h in state.hands]
        state.turned = deck[51]
        state.leader = (state.dealer + 1) % SEATS
        state.trick = []
        state.tricks = []
        state.tricks_won = [0] * SEATS
        state.penalties = [0] * SEATS
        state.void = [set() for _ in range(SEATS)]

    @override
    def to_act(self, state: KnavesState) -> int | None:
        if state.over:
            return None
        return (state.leader + len(state.trick)) % SEATS

    def _legal(self, state: KnavesState) -> list[Action]:
        hand = state.hands[(state.leader + len(state.trick)) % SEATS]
        if state.trick:
            led = state.trick[0][1]
            follow = [PLAY[c] for c in hand if c[1] == led]
            if follow:
                return follow
        return [PLAY[c] for c in hand]

    def _apply(self, state: KnavesState, action: Action) -> None:
        seat = (state.leader + len(state.trick)) % SEATS
        card = action.card
        if state.trick and card[1] != state.trick[0][1]:
            state.void[seat].add(state.trick[0][1])
        state.hands[seat].remove(card)
        state.trick.append(card)
        if len(state.trick) == SEATS:
            self._finish_trick(state)

    def _finish_trick(self, state: KnavesState) -> None:
        trump = state.turned[1]
        best = 0
        for i in range(1, SEATS):
            card, top = state.trick[i], state.trick[best]
            if (card[1] == top[1] and RANK[card] > RANK[top]) or (card[1] == trump != top[1]):
                best = i
        winner = (state.leader + best) % SEATS
        state.tricks.append({"leader": state.leader, "cards": list(state.trick), "winner": winner})
        state.tricks_won[winner] += 1
        state.penalties[winner] += sum(JACK_PENALTY.get(c, 0) for c in state.trick)
        state.trick = []
        state.leader = winner
        if not state.hands[0]:
            self._finish_deal(state)

    def _finish_deal(self, state: KnavesState) -> None:
        points = [state.tricks_won[p] - state.penalties[p] for p in range(SEATS)]
        for p in range(SEATS):
            state.totals[p] += points[p]
        state.records.append(
            {
                "hand": state.deal_number,
                "dealer": state.dealer,
                "deal": [list(h) for h in state.dealt],
                "turned": state.turned,
                "tricks": [dict(t) for t in state.tricks],
                "tricks_won": list(state.tricks_won),
                "penalties": list(state.penalties),
                "points": points,
                "scores": list(state.totals),
            }
        )
        if max(state.totals) >= TARGET:
            state.over = True
            return
        state.deal_number += 1
        state.dealer = (state.dealer + 1) % SEATS
        self._deal(state)

    @override
    def view(self, state: KnavesState, seat: int) -> View:
        return {
            "seat": seat,
            "dealer": state.dealer,
            "hand_number": state.deal_number,
            "hand": list(state.hands[seat]),
            "turned": state.turned,
            "trump": state.turned[1],
            "leader": state.leader,
            "trick": list(state.trick),
            "tricks": shared_view(state, "tricks", state.tricks, with_own_cards),
            "tricks_won": list(state.tricks_won),
            "penalties": list(state.penalties),
            "scores": list(state.totals),
            "to_act": self.to_act(state) if not state.over else -1,
        }

    @override
    def scores(self, state: KnavesState) -> list[int]:
        return list(state.totals)

    @override
    def hand_records(self, state: KnavesState) -> list[HandRecord]:
        return state.records

    @override
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        return MAX_DEALS * 51

    @override
    def all_action_ids(self, state: KnavesState) -> list[str]:
        return [PLAY[c].id for c in DECK]

    @override
    def hidden_cards(self, state: KnavesState, seat: int) -> set[str]:
        return {c for p in range(SEATS) if p != seat for c in state.hands[p]}

    @override
    def resample(self, state: KnavesState, seat: int, rng: random.Random) -> KnavesState:
        out = self.clone(state)
        others = [p for p in range(SEATS) if p != seat]
        pool = [c for p in others for c in out.hands[p]]
        for _ in range(200):
            rng.shuffle(pool)
            hands, start = {}, 0
            for p in others:
                hands[p] = pool[start : start + len(out.hands[p])]
                start += len(out.hands[p])
            if all(c[1] not in out.void[p] for p in others for c in hands[p]):
                for p in others:
                    played = [c for c in out.dealt[p] if c not in out.hands[p]]
                    out.hands[p] = sorted(hands[p], key=DECK.index)
                    out.dealt[p] = sorted(played + hands[p], key=DECK.index)
                out.legal_cache = None
                return out
        return out


GAME = Knaves()
