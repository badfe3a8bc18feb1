"""Kansas City: 4-5 player must-follow trick-taking where losers upgrade cards to trump
(RULINGS §5)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Final

from typing_extensions import override

from games.base import Action, Game, GameSpec, HandRecord, MatchState, Option, OptionValue, View
from games.cards import seeded_rng, shuffle

SUITS: Final = "ROYGBPK"
SUIT_NAMES: Final = {
    "R": "red",
    "O": "orange",
    "Y": "yellow",
    "G": "green",
    "B": "blue",
    "P": "purple",
    "K": "black",
}
NUMBERS: Final = range(1, 9)
DECK: Final = [f"{n}{s}" for s in SUITS for n in NUMBERS]
NUM: Final = {c: int(c[0]) for c in DECK}
ORDER: Final = {c: i for i, c in enumerate(DECK)}
TRUMP_CODE: Final = {n: f"T{n}" for n in NUMBERS}
TRUMP_LED: Final = "T"
SEALED: Final = "?"  # in place of the suit of a face nobody may see (the full-table replay)
PASS_COUNT: Final = 3
CHART: Final = {4: (0, 5, 10, 15, 5), 5: (0, 5, 10, 5)}
HAND_SIZE: Final = {4: 14, 5: 11}
PLAIN: Final = 1 << 30  # upgrade time of a card that is still plain: later than any void

PASS: Final = {c: Action(id=f"pass:{c}", kind="pass", card=c) for c in DECK}
PLAY: Final = {c: Action(id=f"play:{c}", kind="play", card=c) for c in DECK}
PLAY_TRUMP: Final = {
    n: Action(id=f"play:{TRUMP_CODE[n]}", kind="play", card=TRUMP_CODE[n], number=n)
    for n in NUMBERS
}
UPGRADE: Final = {c: Action(id=f"upgrade:{c}", kind="upgrade", card=c) for c in DECK}
NONE: Final = Action(id="none", kind="none")

PHASE_PASS: Final = "pass"
PHASE_PLAY: Final = "play"
PHASE_UPGRADE: Final = "upgrade"
PHASE_OVER: Final = "over"

SPEC: Final = GameSpec(
    name="kansas-city",
    title="Kansas City",
    seat_counts=(4, 5),
    default_seats=4,
    options=(
        Option("hands", 3, range(1, 21), "hands in the match (one per player = seat count)"),
        Option(
            "numbers_public",
            True,
            (True, False),
            "everyone sees the number of every card in every hand (card backs)",
        ),
    ),
    move_ms=1000,
    summary="4-5 players, 56 cards in 7 suits numbered 1-8; pass 3, upgrade losers' cards "
    "to trump; 5 points a trick up to a limit, +2 per captured 4.",
)


def _sorted(cards: list[str]) -> list[str]:
    return sorted(cards, key=ORDER.__getitem__)


def _sealed(card: str, sealed: AbstractSet[str]) -> str:
    """The card as the public may see it: a sealed face shows only its number (`2?`)."""
    return f"{NUM[card]}{SEALED}" if card in sealed else card


@dataclass
class Trick:
    """A completed trick: faces played (trumps included), what others saw, and the upgrades
    that followed it as (seat, number)."""

    leader: int
    cards: list[str]
    shown: list[str]
    winner: int
    upgrades: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class KansasCityState(MatchState):
    """A Kansas City match in progress."""

    dealer: int = 0
    hand_number: int = 0
    phase: str = PHASE_PASS
    hands: list[list[str]] = field(default_factory=list)
    trumps: list[list[str]] = field(default_factory=list)
    passed: list[list[str]] = field(default_factory=list)
    dealt_numbers: list[list[int]] = field(default_factory=list)
    missing: str = ""
    pass_seat: int = 0
    leader: int = 0
    led: str = ""
    trick: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    tricks: list[Trick] = field(default_factory=list)
    upgraders: list[int] = field(default_factory=list)
    held: list[bool] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=list)
    fours: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    void: list[dict[str, int]] = field(default_factory=list)
    upgraded_at: dict[str, int] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    records: list[HandRecord] = field(default_factory=list)


@dataclass
class _Slot:
    """A place holding a card whose face the resampling seat cannot identify."""

    holder: int
    where: str
    i: int
    j: int
    number: int
    upgraded: int
    face: str


class KansasCity(Game[KansasCityState]):
    """The Kansas City rules engine."""

    spec = SPEC

    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> KansasCityState:
        state = KansasCityState(seed=seed, seats=seats, options=options, totals=[0] * seats)
        state.dealer = seeded_rng(seed, "first-dealer").randrange(seats)
        self._deal(state)
        return state

    def _deal(self, state: KansasCityState) -> None:
        n = state.seats
        size = HAND_SIZE[n]
        deck = list(DECK)
        shuffle(deck, seeded_rng(state.seed, "deal", state.hand_number))
        state.hands = [_sorted(deck[size * p : size * p + size]) for p in range(n)]
        state.dealt_numbers = [sorted(NUM[c] for c in h) for h in state.hands]
        state.missing = deck[55] if n == 5 else ""
        state.trumps = [[] for _ in range(n)]
        state.passed = [[] for _ in range(n)]
        state.phase = PHASE_PASS
        state.pass_seat = (state.dealer + 1) % n
        state.leader = (state.dealer + 1) % n
        state.led = ""
        state.trick = []
        state.shown = []
        state.tricks = []
        state.upgraders = []
        state.held = [False] * 9
        state.tricks_won = [0] * n
        state.fours = [0] * n
        state.void = [{} for _ in range(n)]
        state.upgraded_at = {}

    @override
    def to_act(self, state: KansasCityState) -> int | None:
        phase = state.phase
        if phase == PHASE_PLAY:
            return (state.leader + len(state.trick)) % state.seats
        if phase == PHASE_UPGRADE:
            return state.upgraders[0]
        if phase == PHASE_PASS:
            return state.pass_seat
        return None

    def _legal(self, state: KansasCityState) -> list[Action]:
        phase = state.phase
        if phase == PHASE_PLAY:
            seat = (state.leader + len(state.trick)) % state.seats
            hand, trumps, led = state.hands[seat], state.trumps[seat], state.led
            if led:
                if led == TRUMP_LED:
                    if trumps:
                        return [PLAY_TRUMP[NUM[c]] for c in trumps]
                else:
                    follow = [PLAY[c] for c in hand if c[1] == led]
                    if follow:
                        return follow
            return [PLAY[c] for c in hand] + [PLAY_TRUMP[NUM[c]] for c in trumps]
        if phase == PHASE_UPGRADE:
            held = state.held
            ups = [UPGRADE[c] for c in state.hands[state.upgraders[0]] if not held[NUM[c]]]
            ups.append(NONE)
            return ups
        return [PASS[c] for c in state.hands[state.pass_seat]]

    def _apply(self, state: KansasCityState, action: Action) -> None:
        kind = action.kind
        if kind == "play":
            self._play(state, action)
        elif kind == "pass":
            self._pass(state, action.card)
        else:
            seat = state.upgraders.pop(0)
            if kind == "upgrade":
                card = action.card
                state.hands[seat].remove(card)
                state.trumps[seat].append(card)
                state.held[NUM[card]] = True
                state.upgraded_at[card] = len(state.tricks)
                state.tricks[-1].upgrades.append((seat, NUM[card]))
            self._next_upgrader(state)

    def _pass(self, state: KansasCityState, card: str) -> None:
        seat = state.pass_seat
        state.hands[seat].remove(card)
        passed = state.passed[seat]
        passed.append(card)
        if len(passed) < PASS_COUNT:
            return
        n = state.seats
        seat = (seat + 1) % n
        if seat != (state.dealer + 1) % n:
            state.pass_seat = seat
            return
        for p in range(n):
            left = (p + 1) % n
            state.hands[left] = _sorted(state.hands[left] + state.passed[p])
        state.phase = PHASE_PLAY

    def _play(self, state: KansasCityState, action: Action) -> None:
        n = state.seats
        trick = state.trick
        seat = (state.leader + len(trick)) % n
        if action.number > 0:
            number = action.number
            trumps = state.trumps[seat]
            card = next(c for c in trumps if NUM[c] == number)
            trumps.remove(card)
            state.held[number] = False
            shown = TRUMP_CODE[number]
            if not trick:
                state.led = TRUMP_LED
            elif state.led != TRUMP_LED:
                state.void[seat].setdefault(state.led, len(state.tricks) + 1)
        else:
            card = action.card
            state.hands[seat].remove(card)
            shown = card
            if not trick:
                state.led = card[1]
            elif card[1] != state.led and state.led != TRUMP_LED:
                state.void[seat].setdefault(state.led, len(state.tricks) + 1)
        trick.append(card)
        state.shown.append(shown)
        if len(trick) == n:
            self._finish_trick(state)

    def _finish_trick(self, state: KansasCityState) -> None:
        n = state.seats
        trick, shown, led = state.trick, state.shown, state.led
        best, best_trump, best_num = 0, shown[0][0] == "T", NUM[trick[0]]
        for i in range(1, n):
            num = NUM[trick[i]]
            if shown[i][0] == "T":
                if not best_trump or num > best_num:
                    best, best_trump, best_num = i, True, num
            elif not best_trump and trick[i][1] == led and num > best_num:
                best, best_num = i, num
        winner = (state.leader + best) % n
        state.tricks.append(Trick(state.leader, trick, shown, winner))
        state.tricks_won[winner] += 1
        state.fours[winner] += sum(1 for c in trick if c[0] == "4")
        state.trick = []
        state.shown = []
        state.led = ""
        state.leader = winner
        if not state.hands[winner] and not state.trumps[winner]:
            self._finish_hand(state)
            return
        state.upgraders = [(winner + i) % n for i in range(1, n)]
        self._next_upgrader(state)

    def _next_upgrader(self, state: KansasCityState) -> None:
        held, upgraders = state.held, state.upgraders
        while upgraders:
            if any(not held[NUM[c]] for c in state.hands[upgraders[0]]):
                state.phase = PHASE_UPGRADE
                return
            upgraders.pop(0)
        state.phase = PHASE_PLAY

    def _finish_hand(self, state: KansasCityState) -> None:
        n = state.seats
        chart = CHART[n]
        points = [
            (chart[w] if w < len(chart) else 0) + 2 * f
            for w, f in zip(state.tricks_won, state.fours, strict=True)
        ]
        for p in range(n):
            state.totals[p] += points[p]
        result = {
            "hand_number": state.hand_number,
            "dealer": state.dealer,
            "tricks_won": list(state.tricks_won),
            "fours": list(state.fours),
            "points": points,
        }
        state.results.append(result)
        public = bool(state.options["numbers_public"])
        state.records.append(
            {
                **result,
                "numbers_public": public,
                "missing": state.missing,
                "dealt": [
                    {"seat": p, "numbers": list(state.dealt_numbers[p]) if public else []}
                    for p in range(n)
                ],
                "passes": self._passes_view(state),
                "tricks": self._tricks_view(state),
                "scores": list(state.totals),
            }
        )
        if state.hand_number + 1 >= int(state.options["hands"]):
            state.phase = PHASE_OVER
            state.upgraders = []
            return
        state.hand_number += 1
        state.dealer = (state.dealer + 1) % n
        self._deal(state)

    def _passes_view(self, state: KansasCityState) -> list[dict[str, Any]]:
        if state.phase == PHASE_PASS:
            return []
        public = bool(state.options["numbers_public"])
        n = state.seats
        return [
            {
                "seat": p,
                "to_seat": (p + 1) % n,
                "numbers": sorted(NUM[c] for c in state.passed[p]) if public else [],
            }
            for p in range(n)
        ]

    def _tricks_view(self, state: KansasCityState) -> list[dict[str, Any]]:
        n = state.seats
        return [
            {
                "leader": t.leader,
                "plays": [
                    {"seat": (t.leader + i) % n, "card": code} for i, code in enumerate(t.shown)
                ],
                "winner": t.winner,
                "upgrades": [{"seat": p, "number": num} for p, num in t.upgrades],
            }
            for t in state.tricks
        ]

    @override
    def view(self, state: KansasCityState, seat: int) -> View:
        n = state.seats
        public = bool(state.options["numbers_public"])
        passing = state.phase == PHASE_PASS
        players = []
        for p in range(n):
            cards = state.hands[p] + state.passed[p] if passing and p != seat else state.hands[p]
            players.append(
                {
                    "seat": p,
                    "hand_size": len(cards) + len(state.trumps[p]),
                    "numbers": sorted(NUM[c] for c in cards) if public or p == seat else [],
                    "trump_numbers": sorted(NUM[c] for c in state.trumps[p]),
                }
            )
        to_act = self.to_act(state)
        return {
            "seat": seat,
            "dealer": state.dealer,
            "hand_number": state.hand_number,
            "hands_in_match": int(state.options["hands"]),
            "numbers_public": public,
            "phase": state.phase,
            "hand": list(state.hands[seat]),
            "trumps": sorted(state.trumps[seat], key=NUM.__getitem__),
            "passed": list(state.passed[seat]),
            "received": [] if passing else list(state.passed[(seat - 1) % n]),
            "missing": state.missing,
            "players": players,
            "held_trumps": [num for num in NUMBERS if state.held[num]],
            "passes": self._passes_view(state),
            "leader": state.leader,
            "led": SUIT_NAMES.get(state.led, "trump" if state.led else ""),
            "trick": [
                {"seat": (state.leader + i) % n, "card": code} for i, code in enumerate(state.shown)
            ],
            "tricks": self._tricks_view(state),
            "tricks_won": list(state.tricks_won),
            "fours": list(state.fours),
            "results": [dict(r) for r in state.results],
            "scores": list(state.totals),
            "to_act": -1 if to_act is None else to_act,
        }

    @override
    def scores(self, state: KansasCityState) -> list[int]:
        return list(state.totals)

    @override
    def public_label(self, state: KansasCityState, action_id: str) -> str:
        # Passed and upgraded faces stay secret for ever (KC3). Passes are collected and
        # published together (0.5): until the last one, another seat's view still counts a
        # passed card in its passer's hand, so a pass shows nothing; the last one shows what
        # is then published (each seat's passed numbers, sorted: not which pass was which).
        kind, _, card = action_id.partition(":")
        if kind == "upgrade" and card in NUM:
            return f"upgrade:{NUM[card]}"
        if kind == "pass" and card in NUM:
            n, seat = state.seats, state.pass_seat
            last_seat = (seat + 1) % n == (state.dealer + 1) % n
            if not (last_seat and len(state.passed[seat]) == PASS_COUNT - 1):
                return "pass"
            if not state.options["numbers_public"]:
                return "pass"
            passes = [state.passed[p] + ([card] if p == seat else []) for p in range(n)]
            numbers = [",".join(str(k) for k in sorted(NUM[c] for c in cards)) for cards in passes]
            return "pass; shows " + " ".join(f"{p}>{(p + 1) % n}:{numbers[p]}" for p in range(n))
        return action_id

    @override
    def sealed_cards(self, state: KansasCityState) -> set[str]:
        return set(state.upgraded_at)

    @override
    def sealed_view(self, state: KansasCityState, seat: int, sealed: AbstractSet[str]) -> View:
        view = self.view(state, seat)
        if not sealed:
            return view
        for key in ("hand", "trumps", "passed", "received"):
            view[key] = [_sealed(c, sealed) for c in view[key]]
        # A masked card keeps no place among the suits of its hand.
        view["hand"].sort(key=lambda c: ORDER.get(c, len(DECK) + int(c[0])))
        return view

    @override
    def sealed_action(self, action_id: str, sealed: AbstractSet[str]) -> str:
        kind, _, card = action_id.partition(":")
        return f"{kind}:{_sealed(card, sealed)}" if card in sealed else action_id

    @override
    def hand_records(self, state: KansasCityState) -> list[HandRecord]:
        return state.records

    @override
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        tricks = HAND_SIZE[seats]
        per_hand = PASS_COUNT * seats + tricks * seats + (seats - 1) * (tricks - 1)
        return int(options["hands"]) * per_hand

    @override
    def all_action_ids(self, state: KansasCityState) -> list[str]:
        return (
            [PASS[c].id for c in DECK]
            + [PLAY[c].id for c in DECK]
            + [PLAY_TRUMP[n].id for n in NUMBERS]
            + [UPGRADE[c].id for c in DECK]
            + [NONE.id]
        )

    def _slots(self, state: KansasCityState, seat: int) -> list[_Slot]:
        """Every place holding a card the seat cannot identify, with what the seat knows of it."""
        n = state.seats
        public = bool(state.options["numbers_public"])
        slots: list[_Slot] = []
        for p in range(n):
            if p == seat:
                continue
            for j, c in enumerate(state.hands[p]):
                slots.append(_Slot(p, "hand", p, j, NUM[c] if public else 0, PLAIN, c))
            for j, c in enumerate(state.passed[p] if state.phase == PHASE_PASS else ()):
                slots.append(_Slot(p, "passed", p, j, NUM[c] if public else 0, PLAIN, c))
            for j, c in enumerate(state.trumps[p]):
                slots.append(_Slot(p, "trump", p, j, NUM[c], state.upgraded_at[c], c))
        played = [(t.leader, t.cards, t.shown) for t in state.tricks]
        played.append((state.leader, state.trick, state.shown))
        for i, (leader, cards, shown) in enumerate(played):
            for j, code in enumerate(shown):
                p = (leader + j) % n
                if p != seat and code[0] == "T":
                    c = cards[j]
                    slots.append(_Slot(p, "played", i, j, NUM[c], state.upgraded_at[c], c))
        return slots

    @override
    def hidden_cards(self, state: KansasCityState, seat: int) -> set[str]:
        known = set() if state.phase == PHASE_PASS else set(state.passed[seat])
        return {s.face for s in self._slots(state, seat)} - known

    @override
    def resample(self, state: KansasCityState, seat: int, rng: random.Random) -> KansasCityState:
        out = self.clone(state)
        out.legal_cache = None
        slots = self._slots(out, seat)
        if not slots:
            return out
        left = (seat + 1) % out.seats
        known = set() if out.phase == PHASE_PASS else set(out.passed[seat])
        faces = [s.face for s in slots]

        def fits(slot: _Slot, card: str) -> bool:
            if slot.number and NUM[card] != slot.number:
                return False
            if card in known and slot.holder != left:
                return False
            shown_void = out.void[slot.holder].get(card[1], 0)
            return not (shown_void and slot.upgraded >= shown_void)

        allowed = [[c for c in faces if fits(s, c)] for s in slots]
        actor = self.to_act(out)
        check_actor = out.phase == PHASE_UPGRADE and actor != seat
        for _ in range(100):
            order = sorted(range(len(slots)), key=lambda k: (len(allowed[k]), rng.random()))
            used: set[str] = set()
            chosen: list[str] = [""] * len(slots)
            for k in order:
                options = [c for c in allowed[k] if c not in used]
                if not options:
                    break
                chosen[k] = rng.choice(options)
                used.add(chosen[k])
            else:
                if check_actor and not any(
                    not out.held[NUM[chosen[k]]]
                    for k, s in enumerate(slots)
                    if s.holder == actor and s.where == "hand"
                ):
                    continue
                self._place(out, seat, slots, chosen, rng)
                return out
        return out

    def _place(
        self,
        state: KansasCityState,
        seat: int,
        slots: list[_Slot],
        chosen: list[str],
        rng: random.Random,
    ) -> None:
        """Write the resampled faces into their slots and keep every record coherent."""
        mapping = {s.face: c for s, c in zip(slots, chosen, strict=True)}
        upgraded_at = {c: u for c, u in state.upgraded_at.items() if c not in mapping}
        played = [t.cards for t in state.tricks] + [state.trick]
        for s, c in zip(slots, chosen, strict=True):
            if s.where == "hand":
                state.hands[s.i][s.j] = c
            elif s.where == "passed":
                state.passed[s.i][s.j] = c
            elif s.where == "trump":
                state.trumps[s.i][s.j] = c
                upgraded_at[c] = s.upgraded
            else:
                played[s.i][s.j] = c
                upgraded_at[c] = s.upgraded
        state.upgraded_at = upgraded_at
        for p in range(state.seats):
            if p == seat:
                continue
            if state.phase == PHASE_PASS:
                pool = state.hands[p] + state.passed[p]
                rng.shuffle(pool)
                k = len(state.passed[p])
                state.passed[p] = pool[:k]
                state.hands[p] = pool[k:]
            else:
                state.passed[p] = [mapping.get(c, c) for c in state.passed[p]]
            state.hands[p] = _sorted(state.hands[p])


GAME = KansasCity()
