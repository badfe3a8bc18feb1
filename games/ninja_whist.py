"""Ninja Whist: Oh-Hell-style bidding with a Jack of Arrows and icon tokens (RULINGS §4)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from typing_extensions import override

from games.base import Action, Game, GameSpec, HandRecord, MatchState, Option, OptionValue, View
from games.cards import randbelow, seeded_rng, shuffle
from games.errors import BadOptionError

SUITS: Final = "STNR"
SUIT_NAMES: Final = {"S": "sword", "T": "staff", "N": "knives", "R": "stars"}
RANKS: Final = "A23456789K"
JACK: Final = "J*"
DECK: Final = [r + s for s in SUITS for r in RANKS] + [JACK]
DECK_INDEX: Final = {c: i for i, c in enumerate(DECK)}
# Face value of the numbered cards 2-9; Aces, Kings and J* are ranked apart (W9).
FACE: Final = {c: int(c[0]) for c in DECK if c[0].isdigit()}

# Icons a, b, c, d belong to Sword, Staff, Knives, Stars (W2, NW2).
ICON_SUIT: Final = {"a": "S", "b": "T", "c": "N", "d": "R"}
BLANK: Final = "blank"
TOKENS: Final = [
    *[BLANK, "a", "b", "c", "d"],
    *["aa", "ab", "ac", "ad", "bb", "bc", "bd", "cc", "cd", "dd"],
    *["aab", "aac", "aad", "bba", "bbc", "bbd", "cca", "ccb", "ccd", "dda", "ddb", "ddc"],
    *["abc", "abd", "acd", "bcd"],
]
TOKEN_INDEX: Final = {t: i for i, t in enumerate(TOKENS)}
ICONS: Final = {t: 0 if t == BLANK else len(t) for t in TOKENS}
# MATCH[suit][token] = number of the token's icons showing that suit.
MATCH: Final = {
    s: {t: sum(1 for i in t if ICON_SUIT[i] == s) if ICONS[t] else 0 for t in TOKENS} for s in SUITS
}

# Phases (indexes into PHASE_NAMES).
PHASE_BID: Final = 0
PHASE_PLAY: Final = 1
PHASE_ATTACH: Final = 2
PHASE_TAKE: Final = 3
PHASE_OVER: Final = 4
PHASE_NAMES: Final = ("bid", "play", "attach", "take", "over")
MAX_SEATS: Final = 8

BID: Final = [Action(id=f"bid:{b}", kind="bid", number=b) for b in range(len(DECK) // 3 + 1)]
PLAY: Final = {c: Action(id=f"play:{c}", kind="play", card=c) for c in DECK}
ATTACH: Final = {t: Action(id=f"attach:{t}", kind="attach", token=t) for t in TOKENS if ICONS[t]}
DONE: Final = Action(id="done", kind="done")
TAKE_OWN: Final = {t: Action(id=f"take:{t}", kind="take", token=t) for t in TOKENS}
TAKE: Final = [
    {t: Action(id=f"take:{p}:{t}", kind="take", seat=p, token=t) for t in TOKENS}
    for p in range(MAX_SEATS)
]
# Effective suit of every card for leading and following, by trump suit ("" = no trump):
# in trump rounds J* belongs to the trump suit, at no trump it is its own suit "*" (W7).
EFF: Final = {
    trump: {c: (trump if c == JACK and trump else c[1]) for c in DECK} for trump in ["", *SUITS]
}

SPEC: Final = GameSpec(
    name="ninja-whist",
    title="Ninja Whist",
    seat_counts=(3, 4, 5, 6, 7, 8),
    default_seats=4,
    options=(
        Option(
            "double_max",
            False,
            (False, True),
            "play the largest round twice (7 or 8 players only)",
        ),
        Option("eldest_leads", False, (False, True), "the dealer's left leads trick 1"),
    ),
    move_ms=1000,
    summary="3-8 players, hands 1..max..1, exact bids earn 10, icon tokens boost cards 2-9.",
)


def schedule(seats: int, double_max: bool) -> list[int]:
    """The hand size of every round: 1, 2, …, max, …, 2, 1 (max twice with double_max)."""
    top = len(DECK) // seats
    return list(range(1, top + 1)) + ([top] if double_max else []) + list(range(top - 1, 0, -1))


def trick_winner(cards: list[str], boosts: list[int], trump: str) -> int:
    """Index within the trick of the winning card (W9)."""
    led = cards[0]
    if not trump and led == JACK:
        return 0
    eff = EFF[trump]
    suit = trump if trump and any(eff[c] == trump for c in cards) else eff[led]
    jack_in = JACK in cards
    best, best_key = 0, -1
    for i, card in enumerate(cards):
        if eff[card] != suit:
            continue
        rank = card[0]
        if rank == "A":
            triggered = ("K" + card[1]) in cards or (card[1] == trump and jack_in)
            key = 1000 if triggered else 0
        elif card == JACK:
            key = 900
        elif rank == "K":
            key = 800
        else:
            key = FACE[card] + boosts[i]
        if key > best_key:
            best, best_key = i, key
    return best


@dataclass
class NinjaWhistState(MatchState):
    """A Ninja Whist match in progress."""

    sizes: list[int] = field(default_factory=list)
    top: int = 0
    round_index: int = 0
    dealer: int = 0
    hand_size: int = 0
    hands: list[list[str]] = field(default_factory=list)
    dealt: list[list[str]] = field(default_factory=list)
    undealt: list[str] = field(default_factory=list)
    turned: str = ""
    trump: str = ""
    eff: dict[str, str] = field(default_factory=dict)
    phase: int = PHASE_BID
    actor: int = 0
    bids: list[int] = field(default_factory=list)
    leader: int = 0
    led: str = ""
    trick_seats: list[int] = field(default_factory=list)
    trick_cards: list[str] = field(default_factory=list)
    trick_tokens: list[list[str]] = field(default_factory=list)
    trick_boosts: list[int] = field(default_factory=list)
    pending_card: str = ""
    pending_tokens: list[str] = field(default_factory=list)
    pending_boost: int = 0
    tricks: list[dict[str, Any]] = field(default_factory=list)
    stock: list[str] = field(default_factory=list)
    draw_rng: random.Random = field(default_factory=random.Random)
    play_areas: list[list[str]] = field(default_factory=list)
    score_areas: list[list[str]] = field(default_factory=list)
    score_tokens: list[int] = field(default_factory=list)
    start_scores: list[int] = field(default_factory=list)
    void: list[set[str]] = field(default_factory=list)
    records: list[HandRecord] = field(default_factory=list)


def _clear_trick(state: NinjaWhistState) -> None:
    state.trick_seats, state.trick_cards = [], []
    state.trick_tokens, state.trick_boosts = [], []


def _plays(state: NinjaWhistState) -> list[dict[str, Any]]:
    return [
        {
            "seat": state.trick_seats[i],
            "card": state.trick_cards[i],
            "tokens": list(state.trick_tokens[i]),
            "boost": state.trick_boosts[i],
        }
        for i in range(len(state.trick_cards))
    ]


def _copy_trick(trick: dict[str, Any]) -> dict[str, Any]:
    return dict(trick, plays=[dict(p, tokens=list(p["tokens"])) for p in trick["plays"]])


def _sorted_tokens(tokens: list[str]) -> list[str]:
    return sorted(tokens, key=TOKEN_INDEX.__getitem__)


class NinjaWhist(Game[NinjaWhistState]):
    """The Ninja Whist rules engine."""

    spec = SPEC

    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> NinjaWhistState:
        double = bool(options["double_max"])
        if double and seats < 7:
            raise BadOptionError("double_max", True, "False; True only with 7 or 8 players")
        state = NinjaWhistState(
            seed=seed,
            seats=seats,
            options=options,
            sizes=schedule(seats, double),
            top=len(DECK) // seats,
            stock=list(TOKENS),
            play_areas=[[] for _ in range(seats)],
            score_areas=[[] for _ in range(seats)],
            score_tokens=[0] * seats,
        )
        state.dealer = seeded_rng(seed, "first-dealer").randrange(seats)
        self._deal(state)
        return state

    def _deal(self, state: NinjaWhistState) -> None:
        n, k = state.seats, state.round_index
        h = state.hand_size = state.sizes[k]
        # The deck shuffled as positions in DECK (the same permutation as shuffling the cards),
        # so that each hand sorts as plain ints.
        deck = list(range(len(DECK)))
        shuffle(deck, seeded_rng(state.seed, "deal", k))
        state.hands = [[] for _ in range(n)]
        for i in range(n):
            seat = (state.dealer + 1 + i) % n
            state.hands[seat] = [DECK[j] for j in sorted(deck[h * i : h * i + h])]
        state.dealt = [list(hand) for hand in state.hands]
        rest = deck[n * h :]
        if h == state.top:
            state.turned, state.trump = "", ""
        else:
            state.turned = DECK[rest.pop(0)]
            state.trump = "" if state.turned == JACK else state.turned[1]
        state.undealt = [DECK[j] for j in sorted(rest)]
        state.eff = EFF[state.trump]
        state.draw_rng = seeded_rng(state.seed, "stock", k)
        state.phase = PHASE_BID
        state.actor = (state.dealer + 1) % n
        state.bids = [-1] * n
        state.leader = (state.dealer + 1) % n if state.options["eldest_leads"] else state.dealer
        state.led = ""
        _clear_trick(state)
        state.tricks = []
        state.void = [set() for _ in range(n)]
        state.start_scores = self.scores(state)

    @override
    def to_act(self, state: NinjaWhistState) -> int | None:
        return None if state.phase == PHASE_OVER else state.actor

    def forbidden_bid(self, state: NinjaWhistState) -> int:
        """The bid the dealer may not make now (W6), or -1 when no bid is forbidden."""
        if state.phase != PHASE_BID or state.actor != state.dealer:
            return -1
        rest = state.hand_size - sum(b for b in state.bids if b > 0)
        return rest if rest >= 0 else -1

    def _legal(self, state: NinjaWhistState) -> list[Action]:
        phase, actor = state.phase, state.actor
        if phase == PHASE_PLAY:
            hand = state.hands[actor]
            if state.trick_cards:
                eff, led = state.eff, state.led
                follow = [PLAY[c] for c in hand if eff[c] == led]
                if follow:
                    return follow
            return [PLAY[c] for c in hand]
        if phase == PHASE_ATTACH:
            match = MATCH[state.pending_card[1]]
            legal = [ATTACH[t] for t in state.score_areas[actor] if match[t]]
            legal.append(DONE)
            return legal
        if phase == PHASE_BID:
            bids = BID[: state.hand_size + 1]
            if actor == state.dealer:
                banned = self.forbidden_bid(state)
                return [b for b in bids if b.number != banned]
            return list(bids)
        areas = state.score_areas
        if self._alone_highest(state, actor):
            return [TAKE_OWN[t] for t in areas[actor]]
        top = max(len(a) for a in areas)
        return [
            TAKE[p][t]
            for p in range(state.seats)
            if p != actor and len(areas[p]) == top
            for t in areas[p]
        ]

    @staticmethod
    def _alone_highest(state: NinjaWhistState, seat: int) -> bool:
        mine = len(state.score_areas[seat])
        return all(len(a) < mine for p, a in enumerate(state.score_areas) if p != seat)

    def _apply(self, state: NinjaWhistState, action: Action) -> None:
        kind, actor = action.kind, state.actor
        if kind == "play":
            card = action.card
            state.hands[actor].remove(card)
            if card in FACE:
                match = MATCH[card[1]]
                if any(match[t] for t in state.score_areas[actor]):
                    state.phase = PHASE_ATTACH
                    state.pending_card = card
                    state.pending_tokens = []
                    state.pending_boost = 0
                    return
            self._publish(state, card, [], 0)
        elif kind == "attach":
            token = action.token
            area = state.score_areas[actor]
            area.remove(token)
            state.pending_tokens.append(token)
            match = MATCH[state.pending_card[1]]
            state.pending_boost += match[token]
            if not any(match[t] for t in area):
                self._publish_pending(state)
        elif kind == "done":
            self._publish_pending(state)
        elif kind == "bid":
            state.bids[actor] = action.number
            if actor == state.dealer:
                state.phase = PHASE_PLAY
                state.actor = state.leader
            else:
                state.actor = (actor + 1) % state.seats
        else:
            source = actor if action.seat < 0 else action.seat
            state.score_areas[source].remove(action.token)
            self._award(state, actor, action.token, source)

    def _publish_pending(self, state: NinjaWhistState) -> None:
        card, tokens, boost = state.pending_card, state.pending_tokens, state.pending_boost
        state.pending_card, state.pending_tokens, state.pending_boost = "", [], 0
        self._publish(state, card, tokens, boost)

    def _publish(self, state: NinjaWhistState, card: str, tokens: list[str], boost: int) -> None:
        actor = state.actor
        suit = state.eff[card]
        if not state.trick_cards:
            state.led = suit
        elif suit != state.led:
            state.void[actor].add(state.led)
        state.trick_seats.append(actor)
        state.trick_cards.append(card)
        state.trick_tokens.append(tokens)
        state.trick_boosts.append(boost)
        if len(state.trick_cards) < state.seats:
            state.phase = PHASE_PLAY
            state.actor = (actor + 1) % state.seats
            return
        best = trick_winner(state.trick_cards, state.trick_boosts, state.trump)
        winner = state.trick_seats[best]
        state.tricks.append(
            {
                "leader": state.leader,
                "plays": _plays(state),
                "winner": winner,
                "token": "",
                "taken_from": -1,
            }
        )
        for spent in state.trick_tokens:
            state.stock.extend(spent)
        _clear_trick(state)
        state.led = ""
        if state.stock:
            stock = state.stock
            i = randbelow(state.draw_rng, len(stock))
            token = stock[i]
            stock[i] = stock[-1]
            stock.pop()
            self._award(state, winner, token, -1)
        else:
            state.phase = PHASE_TAKE
            state.actor = winner

    def _award(self, state: NinjaWhistState, winner: int, token: str, source: int) -> None:
        state.play_areas[winner].append(token)
        trick = state.tricks[-1]
        trick["token"] = token
        trick["taken_from"] = source
        state.leader = winner
        if state.hands[winner]:
            state.phase = PHASE_PLAY
            state.actor = winner
        else:
            self._finish_round(state)

    def _finish_round(self, state: NinjaWhistState) -> None:
        n = state.seats
        before = state.start_scores
        won = [len(a) for a in state.play_areas]
        exact = [won[p] == state.bids[p] for p in range(n)]
        for p in range(n):
            if exact[p]:
                state.score_tokens[p] += 1
            state.score_areas[p] = _sorted_tokens(state.score_areas[p] + state.play_areas[p])
        record_areas = [list(a) for a in state.play_areas]
        # The record takes the round's trick dicts: the next deal replaces state.tricks, and
        # views copy them. After the last round the state still shows them, so it keeps copies.
        tricks = state.tricks
        if state.round_index + 1 == len(state.sizes):
            state.tricks = [_copy_trick(t) for t in tricks]
        state.play_areas = [[] for _ in range(n)]
        after = self.scores(state)
        state.records.append(
            {
                "hand": state.round_index,
                "dealer": state.dealer,
                "hand_size": state.hand_size,
                "deal": [list(h) for h in state.dealt],
                "undealt": list(state.undealt),
                "turned": state.turned,
                "trump": SUIT_NAMES.get(state.trump, "none"),
                "bids": list(state.bids),
                "tricks": tricks,
                "tricks_won": won,
                "won_tokens": record_areas,
                "exact": exact,
                "score_tokens": list(state.score_tokens),
                "score_areas": [list(a) for a in state.score_areas],
                "points": [after[p] - before[p] for p in range(n)],
                "scores": after,
            }
        )
        if state.round_index + 1 == len(state.sizes):
            state.phase = PHASE_OVER
            state.actor = -1
            return
        state.round_index += 1
        state.dealer = (state.dealer + 1) % n
        self._deal(state)

    @override
    def view(self, state: NinjaWhistState, seat: int) -> View:
        over = state.phase == PHASE_OVER
        mine = state.phase == PHASE_ATTACH and state.actor == seat
        areas = [_sorted_tokens(a) for a in state.score_areas]
        if state.phase == PHASE_ATTACH and not mine:
            # Attached tokens leave the score area publicly only when the play is published.
            areas[state.actor] = _sorted_tokens(areas[state.actor] + state.pending_tokens)
        phase = state.phase if mine or state.phase != PHASE_ATTACH else PHASE_PLAY
        return {
            "seat": seat,
            "dealer": state.dealer,
            "hand_number": state.round_index,
            "rounds": len(state.sizes),
            "cards_dealt": state.hand_size,
            "hand": list(state.hands[seat]),
            "turned": state.turned,
            "trump": SUIT_NAMES.get(state.trump, "none"),
            "phase": PHASE_NAMES[phase],
            "bids": list(state.bids),
            "forbidden_bid": self.forbidden_bid(state),
            "leader": state.leader,
            "trick": _plays(state),
            "tricks": [_copy_trick(t) for t in state.tricks],
            "tricks_won": [len(a) for a in state.play_areas],
            "play_areas": [{"tokens": list(a)} for a in state.play_areas],
            "score_areas": [{"tokens": a} for a in areas],
            "score_tokens": list(state.score_tokens),
            "stock_size": len(state.stock),
            "pending_card": state.pending_card if mine else "",
            "pending_tokens": list(state.pending_tokens) if mine else [],
            "scores": self.scores(state),
            "to_act": -1 if over else state.actor,
        }

    @override
    def scores(self, state: NinjaWhistState) -> list[int]:
        out = [
            10 * state.score_tokens[p] + sum(ICONS[t] for t in state.score_areas[p])
            for p in range(state.seats)
        ]
        if state.phase == PHASE_ATTACH:
            # Pending tokens still count until the play is published.
            out[state.actor] += sum(ICONS[t] for t in state.pending_tokens)
        return out

    @override
    def public_label(self, state: NinjaWhistState, action_id: str) -> str:
        # A card that may be boosted and the tokens attached to it stay private until the
        # play is published (W8): by `done`, or by the last attachable token, whose label
        # then shows the play.
        kind, _, rest = action_id.partition(":")
        if kind == "play" and rest in FACE:
            match = MATCH[rest[1]]
            if any(match[t] for t in state.score_areas[state.actor]):
                return kind
        if state.phase == PHASE_ATTACH and kind in ("attach", "done"):
            tokens = list(state.pending_tokens)
            if kind == "attach":
                tokens.append(rest)
                match = MATCH[state.pending_card[1]]
                left = list(state.score_areas[state.actor])
                if rest in left:
                    left.remove(rest)
                if any(match[t] for t in left):
                    return kind
            return f"{kind}; shows " + "+".join([state.pending_card, *tokens])
        return action_id

    @override
    def hand_records(self, state: NinjaWhistState) -> list[HandRecord]:
        return state.records

    @override
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        sizes = schedule(seats, bool(options.get("double_max", False)))
        tricks = sum(sizes)
        # Bids, plays, one DONE per play, and at most one attach and one take per trick: a
        # token only enters score areas at a round end, one per trick of that round.
        return seats * len(sizes) + tricks * (2 * seats + 2)

    @override
    def all_action_ids(self, state: NinjaWhistState) -> list[str]:
        ids = [b.id for b in BID[: state.top + 1]]
        ids += [a.id for a in PLAY.values()]
        ids += [a.id for a in ATTACH.values()]
        ids.append(DONE.id)
        ids += [a.id for a in TAKE_OWN.values()]
        ids += [a.id for p in range(state.seats) for a in TAKE[p].values()]
        return ids

    @override
    def hidden_cards(self, state: NinjaWhistState, seat: int) -> set[str]:
        hidden = {c for p in range(state.seats) if p != seat for c in state.hands[p]}
        hidden.update(state.undealt)
        if state.pending_card and state.actor != seat:
            hidden.add(state.pending_card)
        return hidden

    @override
    def resample(self, state: NinjaWhistState, seat: int, rng: random.Random) -> NinjaWhistState:
        out = self.clone(state)
        # Stock order is hidden from everyone, so future draws are re-randomised too.
        out.draw_rng = random.Random(rng.getrandbits(64))
        for _ in range(RESAMPLE_TRIES):
            if _redeal(out, seat, rng):
                break
        out.legal_cache = None
        return out


RESAMPLE_TRIES: Final = 100


def _redeal(state: NinjaWhistState, seat: int, rng: random.Random) -> bool:
    """Re-deal the cards hidden from seat consistently with its knowledge; False if stuck."""
    n, eff = state.seats, state.eff
    pending = state.actor if state.phase == PHASE_ATTACH and state.actor != seat else -1
    others = [p for p in range(n) if p != seat]
    pool = [c for p in others for c in state.hands[p]] + state.undealt
    if pending >= 0:
        pool.append(state.pending_card)

    def fits_pending(card: str) -> bool:
        if card not in FACE or eff[card] in state.void[pending]:
            return False
        match = MATCH[card[1]]
        return all(match[t] for t in state.pending_tokens) and any(
            match[t] for t in state.score_areas[pending]
        )

    chosen: dict[int, list[str]] = {}
    remaining = list(pool)
    if pending >= 0:
        options = [c for c in remaining if fits_pending(c)]
        if not options:
            return False
        pick = rng.choice(options)
        remaining.remove(pick)
        chosen[-1] = [pick]
    # Deal the most constrained seats first so few attempts fail.
    order = sorted(others, key=lambda p: sum(1 for c in remaining if eff[c] not in state.void[p]))
    for p in order:
        void = state.void[p]
        options = [c for c in remaining if eff[c] not in void]
        count = len(state.hands[p])
        if len(options) < count:
            return False
        picked = rng.sample(options, count)
        for c in picked:
            remaining.remove(c)
        chosen[p] = picked
    # An off-suit play is legal only when its player cannot follow.
    off_suit = pending >= 0 and state.trick_cards and eff[chosen[-1][0]] != state.led
    if off_suit and any(eff[c] == state.led for c in chosen[pending]):
        return False
    old_pending = state.pending_card if pending >= 0 else ""
    for p in others:
        played = [c for c in state.dealt[p] if c not in state.hands[p] and c != old_pending]
        state.hands[p] = sorted(chosen[p], key=DECK_INDEX.__getitem__)
        extra = chosen[-1] if p == pending else []
        state.dealt[p] = sorted(played + chosen[p] + extra, key=DECK_INDEX.__getitem__)
    if pending >= 0:
        state.pending_card = chosen[-1][0]
        # The boost is private to the player, but must match the new card's icons.
        match = MATCH[state.pending_card[1]]
        state.pending_boost = sum(match[t] for t in state.pending_tokens)
    state.undealt = sorted(remaining, key=DECK_INDEX.__getitem__)
    return True


GAME = NinjaWhist()
