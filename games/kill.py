"""Kill: race to 10-J-Q-K of one colour by exchanging cards; or kill, claim, fold (RULINGS §3)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from typing_extensions import override

from games.base import Action, Game, GameSpec, HandRecord, MatchState, Option, OptionValue, View
from games.cards import seeded_rng, shuffle
from games.kill_cards import (
    CARDS,
    CODES,
    JOKER,
    NONE,
    ORDER,
    SUITS,
    SWAP_OK,
    TRIO,
    VALUE,
    WIN,
    Event,
    classify,
    sort_cards,
)
from games.kill_infer import (
    DECK,
    USED,
    Knowledge,
    advance,
    after_resample,
    code_of,
    initial,
    sample,
)

MAX_SEATS: Final = 4
# A turn's phases (indexes into PHASES).
TURN: Final = 0
DRAWN: Final = 1
RECEIVED: Final = 2
POST: Final = 3
CLAIMED: Final = 4
PHASES: Final = ("turn", "drawn", "recipient_discard", "post_move", "claim_discard")
# Points scored by a round's events.
KILL_WIN: Final = 11
TRUE_WIN: Final = 10
SURVIVOR: Final = 6
CLAIMED_WIN: Final = 5
TRUE_TRIO: Final = 3
CLAIMED_TRIO: Final = 2
FOLDED: Final = 1
KILL_FAIL: Final = -4
# The cards left after the A-2-3s: 4 players deal all four suits' A-2-3, 3 players keep the
# spades A-3 in the deck (KL21).
REST: Final = {
    n: [c for c in CARDS if not (c[0] in "A23" and c[1] in SUITS[:n])] + [JOKER, JOKER]
    for n in (3, 4)
}
# Declarations a player makes about his own hand: points, and whether the round ends
# (a win) or only the declarer exits (a trio or a fold).
DECLARATIONS: Final = {
    "show_win": (TRUE_WIN, True),
    "claim_win": (CLAIMED_WIN, True),
    "show_trio": (TRUE_TRIO, False),
    "claim_trio": (CLAIMED_TRIO, False),
    "fold": (FOLDED, False),
}

DRAW: Final = Action(id="draw", kind="draw")
DECLINE: Final = Action(id="decline", kind="decline")
CONTINUE: Final = Action(id="continue", kind="continue")
SHOW_WIN: Final = Action(id="show_win", kind="show_win")
SHOW_TRIO: Final = Action(id="show_trio", kind="show_trio")
FOLD: Final = Action(id="fold", kind="fold")
CLAIM_WIN: Final = Action(id="claim_win", kind="claim_win")
CLAIM_TRIO: Final = Action(id="claim_trio", kind="claim_trio")
KILL: Final = [Action(id=f"kill:{p}", kind="kill", seat=p) for p in range(MAX_SEATS)]
CLAIM_JOKER: Final = [
    Action(id=f"claim_joker:{p}", kind="claim_joker", seat=p) for p in range(MAX_SEATS)
]
SWAP: Final = {c: Action(id=f"swap:{c}", kind="swap", card=c) for c in CODES}
DISCARD: Final = {c: Action(id=f"discard:{c}", kind="discard", card=c) for c in CODES}
TWO: Final = {
    (g, k, p): Action(id=f"two:{g}+{k}>p{p}", kind="two", card=g, cards=(g, k), seat=p)
    for g in CARDS
    for k in CARDS
    if g != k and VALUE[g] + VALUE[k] <= 13
    for p in range(MAX_SEATS)
}
# TWO by the card given, then the card kept: one action per recipient seat.
TWO_TO: Final[dict[str, dict[str, list[Action]]]] = {}
for (_given, _kept, _seat), _two in TWO.items():
    TWO_TO.setdefault(_given, {}).setdefault(_kept, []).append(_two)
SIMPLE: Final = [DRAW, DECLINE, CONTINUE, SHOW_WIN, SHOW_TRIO, FOLD, CLAIM_WIN, CLAIM_TRIO]

SPEC: Final = GameSpec(
    name="kill",
    title="Kill",
    seat_counts=(3, 4),
    default_seats=4,
    options=(
        Option("target", 21, (21, 26, 31), "the match ends after a round with a score >= target"),
        Option("max_rounds", 12, range(1, 101), "the match ends after this many rounds"),
        Option("turn_cap", 200, range(1, 1001), "turns per round; then it ends, no more points"),
        Option("fixed_suits", False, (False, True), "seat i always gets suit i (H, D, C, S)"),
        Option(
            "first_orbit_draw_only",
            False,
            (False, True),
            "every player's first turn of a round is draw-only, not just the starter's",
        ),
    ),
    move_ms=1000,
    summary="3-4 players; exchange cards toward 10-J-Q-K of one colour; kill, claim Jokers, fold.",
)


@dataclass
class Round:
    """A finished round's raw record."""

    number: int
    starter: int
    deal: list[list[str]]
    deck: list[str]
    log: list[Event]
    hands: list[list[str]]
    out: list[list[str]]
    end: str
    winner: int
    points: list[int]
    scores: list[int]


@dataclass
class KillState(MatchState):
    """A Kill match in progress."""

    target: int = 21
    max_rounds: int = 12
    turn_cap: int = 200
    fixed_suits: bool = False
    first_orbit: bool = False
    starter: int = 0
    round_no: int = 0
    hands: list[list[str]] = field(default_factory=list)
    active: list[bool] = field(default_factory=list)
    immune: list[bool] = field(default_factory=list)
    had_turn: list[bool] = field(default_factory=list)
    out: list[list[str]] = field(default_factory=list)
    deck: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    phase: int = TURN
    turn: int = 0
    drawn: str = ""
    recipient: int = -1
    given: str = ""
    post_win: bool = False
    draw_only: bool = True
    turns: int = 0
    reshuffles: int = 0
    round_points: list[int] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    log: list[Event] = field(default_factory=list)
    deal: list[list[str]] = field(default_factory=list)
    deck0: list[str] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    knowledge: Knowledge | None = None
    over: bool = False


def _event(
    kind: str,
    seat: int,
    card: str = "",
    cards: tuple[str, ...] = (),
    target: int = -1,
    secret: str = "",
    secret_seats: tuple[int, ...] = (),
    points: int = 0,
    success: bool = False,
    count: int = 0,
) -> Event:
    return (kind, seat, card, cards, target, secret, secret_seats, points, success, count)


def _event_dict(event: Event, seat: int) -> dict[str, Any]:
    """An event as seat sees it (seat -1: the full record with every secret)."""
    shown = seat < 0 or seat in event[6]
    out: dict[str, Any] = {
        "kind": event[0],
        "seat": event[1],
        "card": event[2],
        "cards": list(event[3]),
        "target": event[4],
        "secret": event[5] if shown else "",
        "points": event[7],
        "success": event[8],
        "count": event[9],
    }
    if seat < 0:
        out["secret_seats"] = list(event[6])
    return out


class Kill(Game[KillState]):
    """The Kill rules engine."""

    spec = SPEC

    def _new(self, seed: int, seats: int, options: dict[str, OptionValue]) -> KillState:
        state = KillState(
            seed=seed,
            seats=seats,
            options=options,
            target=int(options["target"]),
            max_rounds=int(options["max_rounds"]),
            turn_cap=int(options["turn_cap"]),
            fixed_suits=bool(options["fixed_suits"]),
            first_orbit=bool(options["first_orbit_draw_only"]),
            totals=[0] * seats,
        )
        state.starter = seeded_rng(seed, "first-starter").randrange(seats)
        self._deal(state)
        return state

    def _deal(self, s: KillState) -> None:
        n, start = s.seats, s.starter
        suit = [""] * n
        for j in range(n):
            if s.fixed_suits:
                suit[j] = SUITS[j]
            else:
                suit[(start + j) % n] = SUITS[j]
        hands = [[r + suit[q] for r in "A23"] for q in range(n)]
        rest = list(REST[n])
        shuffle(rest, seeded_rng(s.seed, "deal", s.round_no))
        s.log = []
        for j in range(n):
            q = (start + j) % n
            dealt = _event("deal", q, cards=tuple(hands[q]), secret=rest[j], secret_seats=(q,))
            s.log.append(dealt)
            hands[q].append(rest[j])
        s.hands = hands
        s.deal = [list(h) for h in hands]
        s.deck0 = rest[n:]
        s.deck = rest[: n - 1 : -1]
        s.used = []
        s.out = [[] for _ in range(n)]
        s.active = [True] * n
        s.immune = [False] * n
        s.had_turn = [False] * n
        s.round_points = [0] * n
        s.drawn, s.recipient, s.given = "", -1, ""
        s.turns = s.reshuffles = 0
        s.knowledge = None
        self._start_turn(s, start)

    # --- turn flow -------------------------------------------------------------------------

    def _start_turn(self, s: KillState, seat: int) -> None:
        if s.turns >= s.turn_cap:
            s.log.append(_event("turn_cap", -1, count=s.turns))
            self._end_round(s, -1, "turn_cap")
            return
        s.turns += 1
        s.immune[seat] = False
        s.turn = seat
        s.phase = TURN
        s.draw_only = s.turns == 1 or (s.first_orbit and not s.had_turn[seat])
        s.had_turn[seat] = True

    def _next_turn(self, s: KillState) -> None:
        n, q = s.seats, (s.turn + 1) % s.seats
        while not s.active[q]:
            q = (q + 1) % n
        self._start_turn(s, q)

    def _award(self, s: KillState, seat: int, points: int) -> None:
        s.totals[seat] += points
        s.round_points[seat] += points

    def _exit(self, s: KillState, seat: int) -> None:
        s.active[seat] = False
        s.out[seat] = s.hands[seat]
        s.hands[seat] = []
        alive = [q for q in range(s.seats) if s.active[q]]
        if len(alive) == 1:
            self._award(s, alive[0], SURVIVOR)
            s.log.append(_event("survivor", alive[0], points=SURVIVOR))
            self._end_round(s, alive[0], "survivor")
        else:
            self._next_turn(s)

    def _end_round(self, s: KillState, winner: int, end: str) -> None:
        s.rounds.append(
            Round(
                number=s.round_no,
                starter=s.starter,
                deal=s.deal,
                deck=s.deck0,
                log=s.log,
                hands=[list(h) for h in s.hands],
                out=[list(o) for o in s.out],
                end=end,
                winner=winner,
                points=list(s.round_points),
                scores=list(s.totals),
            )
        )
        if max(s.totals) >= s.target or len(s.rounds) >= s.max_rounds:
            s.over = True
            s.drawn = ""
            return
        s.round_no += 1
        s.starter = (s.starter - 1) % s.seats
        self._deal(s)

    def _pop(self, s: KillState) -> str:
        if not s.deck:
            deck = s.used
            shuffle(deck, seeded_rng(s.seed, "reshuffle", s.round_no, s.reshuffles))
            s.reshuffles += 1
            s.deck, s.used = deck, []
            s.log.append(_event("reshuffle", -1, count=len(deck)))
        return s.deck.pop()

    def _after_move(self, s: KillState) -> None:
        kind = classify(s.hands[s.turn])
        if kind == NONE:
            self._next_turn(s)
        else:
            s.phase = POST
            s.post_win = kind == WIN

    # --- the interface ---------------------------------------------------------------------

    @override
    def to_act(self, state: KillState) -> int | None:
        if state.over:
            return None
        return state.recipient if state.phase == RECEIVED else state.turn

    def _legal(self, state: KillState) -> list[Action]:
        s = state
        phase, a = s.phase, s.turn
        if phase == TURN:
            if s.draw_only:
                return [DRAW]
            return self._turn_actions(s, a)
        if phase == DRAWN:
            return self._drawn_actions(s, a)
        if phase == POST:
            return [CLAIM_WIN if s.post_win else CLAIM_TRIO, CONTINUE]
        if phase == RECEIVED:
            return self._discards(s.hands[s.recipient], s.given)
        return self._discards(s.hands[a], "")

    @staticmethod
    def _others(s: KillState, a: int) -> list[int]:
        """The seats still in the round but a, in seat order."""
        active = s.active
        return [p for p in range(s.seats) if p != a and active[p]]

    def _turn_actions(self, s: KillState, a: int) -> list[Action]:
        kind = classify(s.hands[a])
        out = [DRAW, SHOW_WIN] if kind == WIN else [DRAW]
        others = self._others(s, a)
        immune = s.immune
        for p in others:
            if not immune[p]:
                out.append(KILL[p])
        for p in others:
            out.append(CLAIM_JOKER[p])
        if kind == TRIO:
            out.append(SHOW_TRIO)
        out.append(FOLD)
        return out

    def _drawn_actions(self, s: KillState, a: int) -> list[Action]:
        d = s.drawn
        hand = s.hands[a]
        fits = SWAP_OK[d]
        out = [DECLINE]
        joker = False
        for h in hand:
            if h in fits:
                if h == JOKER:
                    if joker:
                        continue
                    joker = True
                out.append(SWAP[h])
        if d == JOKER:
            return out
        total = VALUE[d]
        others = self._others(s, a)
        for i in range(4):
            g = hand[i]
            if g == JOKER:
                continue
            for j in range(i + 1, 4):
                k = hand[j]
                if k != JOKER and VALUE[g] + VALUE[k] == total:
                    give_g, give_k = TWO_TO[g][k], TWO_TO[k][g]
                    for p in others:
                        out.append(give_g[p])
                    for p in others:
                        out.append(give_k[p])
        return out

    @staticmethod
    def _discards(hand: list[str], keep: str) -> list[Action]:
        out = []
        joker = False
        for c in hand:
            if c == keep:
                continue
            if c == JOKER:
                if joker:
                    continue
                joker = True
            out.append(DISCARD[c])
        return out

    def _apply(self, state: KillState, action: Action) -> None:
        s = state
        kind, a = action.kind, s.turn
        log = s.log
        if kind == "draw":
            d = self._pop(s)
            log.append(_event("draw", a, d))
            s.drawn = d
            s.phase = DRAWN
        elif kind == "decline":
            s.used.append(s.drawn)
            log.append(_event("decline", a, s.drawn))
            s.drawn = ""
            self._after_move(s)
        elif kind == "swap":
            hand, h = s.hands[a], action.card
            hand.remove(h)
            hand.append(s.drawn)
            s.used.append(h)
            log.append(_event("swap", a, s.drawn, secret=h, secret_seats=(a,)))
            s.drawn = ""
            self._after_move(s)
        elif kind == "two":
            g, k = action.cards
            p = action.seat
            hand = s.hands[a]
            hand.remove(g)
            hand.append(s.drawn)
            s.hands[p].append(g)
            pair = (g, k) if ORDER[g] < ORDER[k] else (k, g)
            log.append(_event("two", a, s.drawn, pair, p, g, (a, p)))
            s.drawn = ""
            s.phase, s.recipient, s.given = RECEIVED, p, g
        elif kind == "discard":
            c = action.card
            if s.phase == RECEIVED:
                p = s.recipient
                s.hands[p].remove(c)
                s.used.append(c)
                log.append(_event("discard", p, secret=c, secret_seats=(p,)))
                s.recipient, s.given = -1, ""
                self._after_move(s)
            else:
                s.hands[a].remove(c)
                s.used.append(c)
                log.append(_event("discard", a, secret=c, secret_seats=(a,)))
                s.immune[a] = True
                self._next_turn(s)
        elif kind == "continue":
            log.append(_event("continue", a))
            self._next_turn(s)
        elif kind in DECLARATIONS:
            points, ends_round = DECLARATIONS[kind]
            self._award(s, a, points)
            log.append(_event(kind, a, cards=tuple(s.hands[a]), points=points))
            if ends_round:
                self._end_round(s, a, kind)
            else:
                self._exit(s, a)
        elif kind == "kill":
            p = action.seat
            shown = tuple(s.hands[p])
            if classify(s.hands[p]) == WIN:
                self._award(s, a, KILL_WIN)
                log.append(_event("kill", a, cards=shown, target=p, points=KILL_WIN, success=True))
                self._end_round(s, a, "kill")
            else:
                self._award(s, a, KILL_FAIL)
                log.append(_event("kill", a, cards=shown, target=p, points=KILL_FAIL))
                log.append(_event("exit", a, cards=tuple(s.hands[a])))
                self._exit(s, a)
        else:  # claim_joker
            p = action.seat
            shown = tuple(s.hands[a])
            if JOKER in s.hands[p]:
                log.append(_event("claim_joker", a, JOKER, shown, p, success=True))
                s.hands[p].remove(JOKER)
                s.hands[a].append(JOKER)
                r = self._pop(s)
                s.hands[p].append(r)
                log.append(_event("joker_draw", p, secret=r, secret_seats=(p,)))
                s.phase = CLAIMED
            else:
                log.append(_event("claim_joker", a, "", shown, p))
                self._next_turn(s)

    @override
    def view(self, state: KillState, seat: int) -> View:
        s = state
        over = s.over
        return {
            "seat": seat,
            "starter": s.starter,
            "hand_number": s.round_no,
            "scores": list(s.totals),
            "to_act": -1 if over else (s.recipient if s.phase == RECEIVED else s.turn),
            "turn": -1 if over else s.turn,
            "phase": "over" if over else PHASES[s.phase],
            "hand": sort_cards(s.hands[seat]),
            "drawn": s.drawn,
            "draw_only": s.draw_only and s.phase == TURN and not over,
            "active": list(s.active),
            "immune": list(s.immune),
            "hand_sizes": [len(h) for h in s.hands],
            "deck_size": len(s.deck),
            "used_size": len(s.used),
            "turns": s.turns,
            "round_points": list(s.round_points),
            "out": [{"cards": sort_cards(o)} for o in s.out],
            "events": [_event_dict(e, seat) for e in s.log],
        }

    @override
    def scores(self, state: KillState) -> list[int]:
        return list(state.totals)

    @override
    def hands_finished(self, state: KillState) -> int:
        return len(state.rounds)

    @override
    def public_label(self, state: KillState, action_id: str) -> str:
        # The card a swap replaced, which of a pair was given and a discard stay secret (L13).
        kind, _, rest = action_id.partition(":")
        if kind in ("swap", "discard"):
            return kind
        if kind == "two":
            return f"two>{rest.rpartition('>')[2]}"
        return action_id

    @override
    def hand_records(self, state: KillState) -> list[HandRecord]:
        return [
            {
                "hand": r.number,
                "starter": r.starter,
                "deal": [{"cards": list(h)} for h in r.deal],
                "deck": list(r.deck),
                "events": [_event_dict(e, -1) for e in r.log],
                "final_hands": [{"cards": sort_cards(h)} for h in r.hands],
                "out": [{"cards": sort_cards(o)} for o in r.out],
                "end": r.end,
                "winner": r.winner,
                "points": list(r.points),
                "scores": list(r.scores),
            }
            for r in state.rounds
        ]

    @override
    def decision_bound(self, seats: int, options: Mapping[str, OptionValue]) -> int:
        # A turn is at most: draw, two-card, the recipient's discard, a post-move claim.
        return int(options["max_rounds"]) * int(options["turn_cap"]) * 4

    @override
    def all_action_ids(self, state: KillState) -> list[str]:
        n = state.seats
        ids = [a.id for a in SIMPLE]
        ids += [KILL[p].id for p in range(n)] + [CLAIM_JOKER[p].id for p in range(n)]
        ids += [SWAP[c].id for c in CODES] + [DISCARD[c].id for c in CODES]
        ids += [a.id for (_, _, p), a in TWO.items() if p < n]
        return ids

    @override
    def hidden_cards(self, state: KillState, seat: int) -> set[str]:
        known = set(state.hands[seat])
        for e in state.log:
            if e[2]:
                known.add(e[2])
            known.update(e[3])
            if e[5] and seat in e[6]:
                known.add(e[5])
        hidden = set(state.deck)
        hidden.update(state.used)
        for q in range(state.seats):
            if q != seat:
                hidden.update(state.hands[q])
        return hidden - known

    def knowledge(self, state: KillState) -> Knowledge:
        """Card locations and every seat's possible locations for the current round."""
        start = state.knowledge
        if start is None:
            know = initial(state.seats, state.log)
        else:
            know = Knowledge(
                start.index,
                dict(start.loc),
                [dict(m) for m in start.masks],
                start.limbo,
                start.pair,
                [list(p) for p in start.pairs],
            )
        return advance(state.seats, state.log, know)

    @override
    def resample(self, state: KillState, seat: int, rng: random.Random) -> KillState:
        out = self.clone(state)
        if out.over:
            return out
        know = self.knowledge(out)
        new = None
        for _ in range(50):
            new = sample(know, seat, rng)
            if new is not None:
                break
        if new is None:
            return out
        places: dict[int, list[str]] = {}
        for label, where in sorted(new.items()):
            places.setdefault(where, []).append(code_of(label))
        for q in range(out.seats):
            if q != seat and out.active[q]:
                out.hands[q] = places.get(1 << q, [])
        out.deck = places.get(DECK, [])
        rng.shuffle(out.deck)
        out.used = places.get(USED, [])
        rng.shuffle(out.used)
        out.knowledge = after_resample(know, seat, new, out.seats)
        if out.phase == RECEIVED:
            out.given = out.knowledge.pair[0]
        out.legal_cache = None
        return out


GAME = Kill()
