"""Knives: 5 players, a banker with a secret shadow banker, Knives always trump (RULINGS §1)."""

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
    Option,
    OptionValue,
    View,
    shared_view,
    with_own_cards,
)
from games.cards import seeded_rng, shuffle

SEATS: Final = 5
HAND_SIZE: Final = 6
TRICKS: Final = 6
# 1 suit + 5 auction + max(2 bank + 1 solo, 1 mode + 2 reveals + done) + 30
DECISIONS_PER_HAND: Final = 40
SUIT_LETTERS: Final = "SCDH"
SUIT_NAMES: Final = {"S": "spades", "C": "clubs", "D": "diamonds", "H": "hearts", "K": "knives"}
SUIT_LETTER: Final = {name: letter for letter, name in SUIT_NAMES.items()}
JOKER: Final = "JO"
KNIVES: Final = ["AK", "7K", "6K", "5K", "4K", "3K", "2K"]
TRAD_RANKS: Final = "KQJMTG"
DECK: Final = [JOKER, *KNIVES, *(r + s for s in SUIT_LETTERS for r in TRAD_RANKS)]
ORDER: Final = {card: i for i, card in enumerate(DECK)}
SUIT_OF: Final = {card: "" if card == JOKER else card[1] for card in DECK}


def _rank(card: str) -> int:
    """Rank within the card's suit, higher is stronger (Joker 0)."""
    if card == JOKER:
        return 0
    if card[1] == "K":
        return 8 if card[0] == "A" else int(card[0])
    return 6 - TRAD_RANKS.index(card[0])


RANK: Final = {card: _rank(card) for card in DECK}
STARS: Final = {card: {"K": 3, "Q": 2, "J": 1}.get(card[0], 0) for card in DECK}
STARS["AK"] = 1
STARS[JOKER] = 0

DECLARE: Final = "declare"
AUCTION: Final = "auction"
BANK: Final = "bank"
SOLO: Final = "solo"
MODE: Final = "mode"
REVEAL: Final = "reveal"
PLAY: Final = "play"
OVER: Final = "over"
BANKER: Final = "banker"
LEASTER: Final = "leaster"
MOSTER: Final = "moster"

SUIT_ACTION: Final = {
    s: Action(id=f"suit:{SUIT_NAMES[s]}", kind="suit", suit=SUIT_NAMES[s]) for s in SUIT_LETTERS
}
PICK: Final = Action(id="pick", kind="pick")
PASS_SUIT: Final = {
    s: Action(id=f"pass:{SUIT_NAMES[s]}", kind="pass", suit=SUIT_NAMES[s]) for s in SUIT_LETTERS
}
PASS_PLAIN: Final = Action(id="pass", kind="pass")
BANK_ACTION: Final = {c: Action(id=f"bank:{c}", kind="bank", card=c) for c in DECK}
SOLO_ACTION: Final = Action(id="solo", kind="solo")
NO_SOLO: Final = Action(id="no_solo", kind="no_solo")
LEASTER_ACTION: Final = Action(id="leaster", kind="leaster")
MOSTER_ACTION: Final = Action(id="moster", kind="moster")
REVEAL_ACTION: Final = {c: Action(id=f"reveal:{c}", kind="reveal", card=c) for c in DECK}
DONE: Final = Action(id="done", kind="done")
PLAY_ACTION: Final = {c: Action(id=f"play:{c}", kind="play", card=c) for c in DECK}
AUCTION_LEGAL: Final = {
    s: [PICK] + [PASS_SUIT[t] for t in SUIT_LETTERS if t != s] for s in SUIT_LETTERS
}
ALL_IDS: Final = (
    [a.id for a in SUIT_ACTION.values()]
    + [PICK.id, PASS_PLAIN.id]
    + [a.id for a in PASS_SUIT.values()]
    + [a.id for a in BANK_ACTION.values()]
    + [SOLO_ACTION.id, NO_SOLO.id, LEASTER_ACTION.id, MOSTER_ACTION.id, DONE.id]
    + [a.id for a in REVEAL_ACTION.values()]
    + [a.id for a in PLAY_ACTION.values()]
)


def _power(card: str, strong: str, led: str) -> int:
    """Trick-taking power of a card (K12), before the Ghost rule."""
    if card == JOKER:
        return 100
    suit = SUIT_OF[card]
    if suit == "K":
        return 80 + RANK[card]
    if suit == strong:
        return 60 + RANK[card]
    if suit == led:
        return 40 + RANK[card]
    return 0


# POWER[strong][led suit, "" when the Joker led] -> card -> power
POWER: Final = {
    s: {led: {c: _power(c, s, led) for c in DECK} for led in ["", "K", *SUIT_LETTERS]}
    for s in SUIT_LETTERS
}
# GROUP[(strong, trumps_one_suit)] -> card -> the suit it counts as for following (K11)
GROUP: Final = {
    (s, one): {
        c: "" if c == JOKER else ("T" if one and SUIT_OF[c] in ("K", s) else SUIT_OF[c])
        for c in DECK
    }
    for s in SUIT_LETTERS
    for one in (False, True)
}

SPEC: Final = GameSpec(
    name="knives",
    title="Knives",
    seat_counts=(5,),
    default_seats=5,
    options=(
        Option("target", 10, (10, 15, 20), "the match ends after a hand once anyone has this many"),
        Option(
            "simplified_scoring", False, (False, True), "flat payouts: +2/+3 partners, +4/+6 solo"
        ),
        Option(
            "simplified_rules",
            False,
            (False, True),
            "spades always strong, dealer must pick, no Ghost/Thief powers, solo win +4",
        ),
        Option(
            "solo_mode",
            "voluntary",
            ("voluntary", "info_only"),
            "voluntary: the banker may go alone; info_only: SOLO only when already alone (K6)",
        ),
        Option("trumps_one_suit", False, (False, True), "Knives and the strong suit follow as one"),
        Option(
            "leaster_bank_reveal",
            False,
            (False, True),
            "in leaster/moster the dealer sees the bank and may reveal its cards",
        ),
        Option("leaster_needs_trick", False, (False, True), "leaster: only trick-takers can win"),
    ),
    move_ms=1000,
    summary="5 players, 6 cards each and a 2-card bank; the banker and a secret shadow banker "
    "(the strong Ghost's holder) try to take 13 of the 25 stars.",
)


def banker_payout(stars: int, solo: bool, simplified_scoring: bool, simplified_rules: bool) -> int:
    """Points for each member of a winning banker side with `stars` ≥ 13 (K14, K16)."""
    full = stars >= 25
    if solo:
        if simplified_rules:
            return 4
        if simplified_scoring:
            return 6 if full else 4
        return 2 if stars <= 16 else 4 if stars <= 20 else 6
    if simplified_scoring:
        return 3 if full else 2
    return 1 if stars <= 16 else 2 if stars <= 20 else 3


@dataclass
class KnivesState(MatchState):
    """A Knives match in progress."""

    target: int = 10
    simple_rules: bool = False
    simple_scoring: bool = False
    info_only: bool = False
    one_suit: bool = False
    bank_reveal: bool = False
    needs_trick: bool = False
    dealer: int = 0
    hand_number: int = 0
    hand_start: int = 0
    phase: str = DECLARE
    actor: int = 0
    hands: list[list[str]] = field(default_factory=list)
    dealt: list[list[str]] = field(default_factory=list)
    bank: list[str] = field(default_factory=list)
    declared: str = ""
    strong: str = ""
    auction: list[tuple[int, str, str]] = field(default_factory=list)
    mode: str = ""
    banker: int = -1
    banked: list[str] = field(default_factory=list)
    settled: bool = False
    ghost: str = ""
    alone: bool = False
    solo_announced: bool = False
    shadow: int = -1
    ghost_by: int = -1
    revealed: list[str] = field(default_factory=list)
    reveal_done: bool = False
    leader: int = 0
    trick: list[str] = field(default_factory=list)
    led_suit: str = ""
    led_group: str = ""
    tricks: list[dict[str, Any]] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=list)
    stars: list[int] = field(default_factory=list)
    void: list[set[str]] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    records: list[HandRecord] = field(default_factory=list)
    over: bool = False


def _auction_entry(entry: tuple[int, str, str]) -> dict[str, Any]:
    seat, action, suit = entry
    return {"seat": seat, "action": action, "suit": SUIT_NAMES[suit] if suit else ""}


def _result_entry(record: HandRecord) -> dict[str, Any]:
    points = list(record["points"])
    return {"hand_number": record["hand_number"], "mode": record["mode"], "points": points}


def _played_by(state: KnivesState) -> list[list[str]]:
    """The cards each seat has played this hand."""
    out: list[list[str]] = [[] for _ in range(SEATS)]
    for trick in state.tricks:
        for i, card in enumerate(trick["cards"]):
            out[(trick["leader"] + i) % SEATS].append(card)
    for i, card in enumerate(state.trick):
        out[(state.leader + i) % SEATS].append(card)
    return out


def _settle_shadow(state: KnivesState) -> None:
    """K6/K7: the shadow is the non-banker who held the strong Ghost, unless SOLO was announced."""
    owner = state.banker
    if state.ghost_by >= 0:
        owner = state.ghost_by
    else:
        for p in range(SEATS):
            if state.ghost in state.hands[p]:
                owner = p
    state.alone = owner == state.banker or state.solo_announced
    state.shadow = -1 if state.alone else owner


class Knives(Game[KnivesState]):
    """The Knives rules engine."""

    spec = SPEC

    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> KnivesState:
        state = KnivesState(seed=seed, seats=seats, options=options, totals=[0] * SEATS)
        state.target = int(options["target"])
        state.simple_rules = bool(options["simplified_rules"])
        state.simple_scoring = bool(options["simplified_scoring"])
        state.info_only = options["solo_mode"] == "info_only"
        state.one_suit = bool(options["trumps_one_suit"])
        state.bank_reveal = bool(options["leaster_bank_reveal"])
        state.needs_trick = bool(options["leaster_needs_trick"])
        state.dealer = seeded_rng(seed, "first-dealer").randrange(SEATS)
        self._deal(state)
        return state

    def _deal(self, state: KnivesState) -> None:
        deck = list(DECK)
        shuffle(deck, seeded_rng(state.seed, "deal", state.hand_number))
        state.hands = [
            sorted(deck[HAND_SIZE * p : HAND_SIZE * p + HAND_SIZE], key=ORDER.__getitem__)
            for p in range(SEATS)
        ]
        state.dealt = [list(h) for h in state.hands]
        state.bank = deck[SEATS * HAND_SIZE :]
        state.hand_start = len(state.history)
        state.auction = []
        state.mode = ""
        state.banker = -1
        state.banked = []
        state.settled = False
        state.alone = False
        state.solo_announced = False
        state.shadow = -1
        state.ghost_by = -1
        state.revealed = []
        state.reveal_done = False
        state.leader = -1
        state.trick = []
        state.led_suit = state.led_group = ""
        state.tricks = []
        state.tricks_won = [0] * SEATS
        state.stars = [0] * SEATS
        state.void = [set() for _ in range(SEATS)]
        if state.simple_rules:
            state.declared = state.strong = "S"
            state.ghost = "GS"
            state.phase = AUCTION
            state.actor = (state.dealer + 1) % SEATS
        else:
            state.declared = state.strong = state.ghost = ""
            state.phase = DECLARE
            state.actor = state.dealer

    @override
    def to_act(self, state: KnivesState) -> int | None:
        return None if state.over else state.actor

    def _legal(self, state: KnivesState) -> list[Action]:
        phase = state.phase
        if phase == PLAY:
            hand = state.hands[state.actor]
            led = state.led_group
            if led:
                group = GROUP[state.strong, state.one_suit]
                follow = [PLAY_ACTION[c] for c in hand if group[c] == led]
                if follow:
                    if JOKER in hand:
                        follow.insert(0, PLAY_ACTION[JOKER])
                    return follow
            return [PLAY_ACTION[c] for c in hand]
        if phase == DECLARE:
            return [SUIT_ACTION[s] for s in SUIT_LETTERS]
        if phase == AUCTION:
            if state.simple_rules:
                return [PICK] if state.actor == state.dealer else [PICK, PASS_PLAIN]
            return list(AUCTION_LEGAL[state.strong])
        if phase == BANK:
            return [BANK_ACTION[c] for c in state.hands[state.banker]]
        if phase == SOLO:
            # state.alone holds K6 here: nothing is announced before this decision
            return [SOLO_ACTION, NO_SOLO] if state.alone or not state.info_only else [NO_SOLO]
        if phase == MODE:
            return [LEASTER_ACTION, MOSTER_ACTION]
        return [REVEAL_ACTION[c] for c in state.bank if c not in state.revealed] + [DONE]

    def _apply(self, state: KnivesState, action: Action) -> None:
        kind = action.kind
        if kind == "play":
            self._play(state, action.card)
        elif kind == "suit":
            state.declared = state.strong = SUIT_LETTER[action.suit]
            state.phase = AUCTION
            state.actor = (state.dealer + 1) % SEATS
        elif kind == "pick":
            seat = state.actor
            state.auction.append((seat, "pick", ""))
            state.mode = BANKER
            state.banker = seat
            state.ghost = "G" + state.strong
            state.hands[seat] = sorted(state.hands[seat] + state.bank, key=ORDER.__getitem__)
            state.phase = BANK
        elif kind == "pass":
            seat = state.actor
            suit = SUIT_LETTER[action.suit] if action.suit else ""
            state.auction.append((seat, "pass", suit))
            if suit:
                state.strong = suit
            if seat == state.dealer:
                state.mode = ""
                state.ghost = "G" + state.strong
                state.phase = MODE
            else:
                state.actor = (seat + 1) % SEATS
        elif kind == "bank":
            state.hands[state.banker].remove(action.card)
            state.banked.append(action.card)
            if len(state.banked) == 2:
                state.settled = True
                _settle_shadow(state)
                state.phase = SOLO
        elif kind in ("solo", "no_solo"):
            if kind == "solo":
                state.solo_announced = True
                _settle_shadow(state)
            self._start_play(state, (state.banker + 1) % SEATS)
        elif kind in ("leaster", "moster"):
            state.mode = kind
            if state.bank_reveal:
                state.phase = REVEAL
            else:
                self._start_play(state, (state.dealer + 1) % SEATS)
        elif kind == "reveal":
            state.revealed.append(action.card)
        else:  # done
            state.reveal_done = True
            self._start_play(state, (state.dealer + 1) % SEATS)

    def _start_play(self, state: KnivesState, leader: int) -> None:
        state.phase = PLAY
        state.leader = state.actor = leader

    def _play(self, state: KnivesState, card: str) -> None:
        seat = state.actor
        trick = state.trick
        if trick:
            led = state.led_group
            if led and card != JOKER and GROUP[state.strong, state.one_suit][card] != led:
                state.void[seat].add(led)
        else:
            state.led_suit = SUIT_OF[card]
            state.led_group = GROUP[state.strong, state.one_suit][card]
        if card == state.ghost:
            state.ghost_by = seat
        state.hands[seat].remove(card)
        trick.append(card)
        if len(trick) == SEATS:
            self._finish_trick(state)
        else:
            state.actor = (seat + 1) % SEATS

    def _finish_trick(self, state: KnivesState) -> None:
        trick = state.trick
        leader = state.leader
        power = POWER[state.strong][state.led_suit]
        powers = [power[c] for c in trick]
        if not state.simple_rules:
            for i, card in enumerate(trick):
                if card[0] == "G":
                    king = "K" + card[1]
                    if king in trick and power[king]:
                        powers[i] = power[king] + 1
        winner = (leader + powers.index(max(powers))) % SEATS
        nxt = winner
        if not state.simple_rules and len(state.tricks) < TRICKS - 1:
            thieves = [i for i, card in enumerate(trick) if card[0] == "T"]
            if len(thieves) == 1:
                nxt = (leader + thieves[0]) % SEATS
        state.tricks.append(
            {"leader": leader, "cards": trick, "winner": winner, "next_leader": nxt}
        )
        state.tricks_won[winner] += 1
        state.stars[winner] += sum(STARS[c] for c in trick)
        state.trick = []
        state.led_suit = state.led_group = ""
        state.leader = state.actor = nxt
        if len(state.tricks) == TRICKS:
            self._finish_hand(state)

    def _points(self, state: KnivesState) -> tuple[list[int], int]:
        """Points of the hand per seat and the banker side's stars B (-1 without a banker)."""
        points = [0] * SEATS
        if state.mode == BANKER:
            side = {state.banker} if state.alone else {state.banker, state.shadow}
            b = sum(state.stars[p] for p in side) + sum(STARS[c] for c in state.banked)
            if b >= 13:
                pay = banker_payout(b, state.alone, state.simple_scoring, state.simple_rules)
                for p in side:
                    points[p] = pay
            else:
                for p in range(SEATS):
                    if p not in side:
                        points[p] = 1
            return points, b
        eligible = list(range(SEATS))
        if state.needs_trick and state.mode == LEASTER:
            eligible = [p for p in eligible if state.tricks_won[p] > 0]
        values = [state.stars[p] for p in eligible]
        best = min(values) if state.mode == LEASTER else max(values)
        for p in eligible:
            if state.stars[p] == best:
                points[p] = 2
        return points, -1

    def _finish_hand(self, state: KnivesState) -> None:
        points, b = self._points(state)
        for p in range(SEATS):
            state.totals[p] += points[p]
        state.records.append(
            {
                "hand_number": state.hand_number,
                "dealer": state.dealer,
                "deal": [{"cards": list(h)} for h in state.dealt],
                "bank": list(state.bank),
                "declared_suit": SUIT_NAMES[state.declared],
                "auction": self._auction_view(state),
                "strong_suit": SUIT_NAMES[state.strong],
                "mode": state.mode,
                "banker": state.banker,
                "banked": list(state.banked),
                "solo_announced": state.solo_announced,
                "solo": state.mode == BANKER and state.alone,
                "shadow": state.shadow,
                "revealed": list(state.revealed),
                "tricks": [with_own_cards(t) for t in state.tricks],
                "tricks_won": list(state.tricks_won),
                "stars": list(state.stars),
                "banker_side_stars": b,
                "points": points,
                "scores": list(state.totals),
                "actions": state.history[state.hand_start :],
            }
        )
        if max(state.totals) >= state.target:
            state.over = True
            state.phase = OVER
            state.actor = -1
            return
        state.hand_number += 1
        state.dealer = (state.dealer + 1) % SEATS
        self._deal(state)

    @staticmethod
    def _auction_view(state: KnivesState) -> list[dict[str, Any]]:
        return [_auction_entry(entry) for entry in state.auction]

    @override
    def view(self, state: KnivesState, seat: int) -> View:
        banker = state.banker
        shadow = -1
        if state.settled and state.shadow >= 0 and (seat == state.shadow or state.ghost_by >= 0):
            shadow = state.shadow
        banker_solo = state.solo_announced or (
            state.settled and state.alone and (seat == banker or state.ghost_by == banker)
        )
        sees_bank = (seat == banker) or (
            state.bank_reveal and state.mode in (LEASTER, MOSTER) and seat == state.dealer
        )
        return {
            "seat": seat,
            "dealer": state.dealer,
            "hand_number": state.hand_number,
            "target": state.target,
            "scores": list(state.totals),
            "to_act": -1 if state.over else state.actor,
            "phase": state.phase,
            "hand": list(state.hands[seat]),
            "declared_suit": SUIT_NAMES[state.declared] if state.declared else "",
            "strong_suit": SUIT_NAMES[state.strong] if state.strong else "",
            "auction": shared_view(state, "auction", state.auction, _auction_entry),
            "mode": state.mode,
            "banker": banker,
            "bank": list(state.bank) if sees_bank else [],
            "banked": list(state.banked) if seat == banker else [],
            "solo_announced": state.solo_announced,
            "banker_solo": banker_solo,
            "shadow": shadow,
            "revealed": list(state.revealed) if state.reveal_done or seat == state.dealer else [],
            "leader": state.leader,
            "led_suit": SUIT_NAMES[state.led_suit] if state.led_suit else "",
            "trick": list(state.trick),
            "tricks": shared_view(state, "tricks", state.tricks, with_own_cards),
            "tricks_won": list(state.tricks_won),
            "stars_won": list(state.stars),
            "results": shared_view(state, "results", state.records, _result_entry),
        }

    @override
    def scores(self, state: KnivesState) -> list[int]:
        return list(state.totals)

    @override
    def public_label(self, state: KnivesState, action_id: str) -> str:
        # Banked cards are the banker's secret; reveals are published together, by `done`.
        kind, _, _ = action_id.partition(":")
        if kind in ("bank", "reveal"):
            return kind
        if kind == "done" and state.revealed:
            return "done; shows " + "+".join(state.revealed)
        return action_id

    @override
    def hand_records(self, state: KnivesState) -> list[HandRecord]:
        return state.records

    @override
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        target = int(options.get("target", 10))
        # every hand awards at least 2 points, so 5(T-1) points can be shared out without a winner
        return (5 * (target - 1) // 2 + 1) * DECISIONS_PER_HAND

    @override
    def all_action_ids(self, state: KnivesState) -> list[str]:
        return list(ALL_IDS)

    def _bank_hidden(self, state: KnivesState, seat: int) -> list[str]:
        """Cards of an untaken bank that seat cannot see."""
        if state.banker >= 0:
            return []
        if state.bank_reveal and state.mode in (LEASTER, MOSTER) and seat == state.dealer:
            return []
        shown = state.revealed if state.reveal_done else []
        return [c for c in state.bank if c not in shown]

    @override
    def hidden_cards(self, state: KnivesState, seat: int) -> set[str]:
        hidden = {c for p in range(SEATS) if p != seat for c in state.hands[p]}
        if state.banker >= 0 and seat != state.banker:
            hidden.update(state.banked)
        hidden.update(self._bank_hidden(state, seat))
        return hidden

    @override
    def resample(self, state: KnivesState, seat: int, rng: random.Random) -> KnivesState:
        out = self.clone(state)
        if state.over:
            return out
        banker = state.banker
        others = [p for p in range(SEATS) if p != seat]
        bank_hidden = self._bank_hidden(state, seat)
        hides_banked = banker >= 0 and seat != banker
        pool = [c for p in others for c in state.hands[p]]
        if hides_banked:
            pool += state.banked
        pool += bank_hidden
        group = GROUP[state.strong, state.one_suit] if state.strong else {}
        # in info_only mode a SOLO announcement proves the banker held or banked the Ghost
        ghost_with_banker = (
            state.info_only and state.solo_announced and state.ghost_by < 0 and seat != banker
        )
        for _ in range(200):
            rng.shuffle(pool)
            hands: dict[int, list[str]] = {}
            start = 0
            for p in others:
                hands[p] = pool[start : start + len(state.hands[p])]
                start += len(state.hands[p])
            banked = pool[start : start + len(state.banked)] if hides_banked else state.banked
            start += len(banked) if hides_banked else 0
            bank_new = pool[start:]
            if any(group[c] in state.void[p] for p in others if state.void[p] for c in hands[p]):
                continue
            if ghost_with_banker and not (state.ghost in hands[banker] or state.ghost in banked):
                continue
            self._install(out, hands, list(banked), bank_new, bank_hidden, rng)
            return out
        return out

    def _install(
        self,
        out: KnivesState,
        hands: dict[int, list[str]],
        banked: list[str],
        bank_new: list[str],
        bank_hidden: list[str],
        rng: random.Random,
    ) -> None:
        """Put re-dealt hidden cards in place and rebuild the records that depend on them."""
        for p, cards in hands.items():
            out.hands[p] = sorted(cards, key=ORDER.__getitem__)
        out.banked = banked
        if bank_hidden:
            mapping = dict(zip(bank_hidden, bank_new, strict=True))
            out.bank = [mapping.get(c, c) for c in out.bank]
            out.revealed = [mapping.get(c, c) for c in out.revealed]
        played = _played_by(out)
        for p in hands:
            if p == out.banker:
                total = played[p] + out.hands[p] + out.banked
                out.bank = rng.sample(total, 2)
                out.dealt[p] = sorted(
                    (c for c in total if c not in out.bank), key=ORDER.__getitem__
                )
            else:
                out.dealt[p] = sorted(played[p] + out.hands[p], key=ORDER.__getitem__)
        if out.settled:
            _settle_shadow(out)
        out.legal_cache = None


GAME = Knives()
