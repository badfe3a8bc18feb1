"""What one Kill seat can know of where every card lies, and re-dealing what it cannot (L13).

The current round's event log is replayed to follow each card's true location and, per seat,
a bitmask of the locations the card may be in as far as that seat can tell. Both Jokers are
identical cards, so the replay gives them the internal labels J0 and J1 and moves whichever
one truly sits where a public event says a Joker left. Sampling re-deals the cards a seat
cannot place among the other hands, the deck and the used pile, each card within its mask
and each location keeping its count (a transportation problem solved card by card with a
Hall-condition check, so it never dead-ends).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from games.kill_cards import CARDS, JOKER, SWAP_OK, Event

DECK = 1 << 4
USED = 1 << 5
OUT = 1 << 6
LIMBO = 1 << 7
JOKER_LABELS = ("J0", "J1")


@dataclass
class Knowledge:
    """True card locations and each seat's possible locations after log[:index]."""

    index: int
    loc: dict[str, int]
    masks: list[dict[str, int]]
    limbo: str = ""
    pair: tuple[str, str] = ("", "")
    pairs: list[list[tuple[str, str, int]]] = field(default_factory=list)


def code_of(label: str) -> str:
    """The card code of an internal label (both Joker labels are the code JK)."""
    return JOKER if label in JOKER_LABELS else label


def _label(know: Knowledge, code: str, where: int) -> str:
    if code != JOKER:
        return code
    for label in JOKER_LABELS:
        if know.loc[label] == where:
            return label
    raise AssertionError(f"no Joker at location {where}")


def initial(seats: int, log: list[Event]) -> Knowledge:
    """Knowledge right after the deal (the first `seats` events of a round are the deal)."""
    bits = [1 << q for q in range(seats)]
    unknown = [DECK | (sum(bits) - bits[v]) for v in range(seats)]
    know = Knowledge(seats, {}, [{} for _ in range(seats)], pairs=[[] for _ in range(seats)])
    jokers = list(JOKER_LABELS)
    for event in log[:seats]:
        q = event[1]
        for card in event[3]:
            know.loc[card] = bits[q]
            for mask in know.masks:
                mask[card] = bits[q]
        dealt = jokers.pop(0) if event[5] == JOKER else event[5]
        know.loc[dealt] = bits[q]
        for v, mask in enumerate(know.masks):
            mask[dealt] = bits[q] if v == q else unknown[v]
    for label in CARDS + jokers:
        if label not in know.loc:
            know.loc[label] = DECK
            for v, mask in enumerate(know.masks):
                mask[label] = unknown[v]
    return know


def _reveal(know: Knowledge, q: int) -> None:
    """Seat q's hand is shown to all: its cards are pinned, no other card is there."""
    bit = 1 << q
    for label, where in know.loc.items():
        for mask in know.masks:
            if where == bit:
                mask[label] = bit
            elif mask[label] & bit:
                mask[label] &= ~bit


def _leave(know: Knowledge, q: int) -> None:
    """Seat q exits: its hand is face up and out of play (L8)."""
    bit = 1 << q
    for label, where in know.loc.items():
        if where == bit:
            know.loc[label] = OUT
            for mask in know.masks:
                mask[label] = OUT
        else:
            for mask in know.masks:
                mask[label] &= ~bit


def _may_have_gone(know: Knowledge, v: int, q: int, to: int, keep: tuple[str, ...]) -> None:
    """For seat v, any card that might be in seat q's hand might now be at `to` instead."""
    bit = 1 << q
    mask = know.masks[v]
    for label, m in mask.items():
        if m & bit and label not in keep:
            mask[label] = m | to


def advance(seats: int, log: list[Event], know: Knowledge) -> Knowledge:
    """Replay log[know.index:] onto know (modified in place and returned)."""
    loc, masks = know.loc, know.masks
    for event in log[know.index :]:
        kind, a = event[0], event[1]
        bit = 1 << a if a >= 0 else 0
        if kind == "draw":
            label = _label(know, event[2], DECK)
            loc[label] = LIMBO
            for mask in masks:
                mask[label] = LIMBO
            know.limbo = label
        elif kind == "decline":
            loc[know.limbo] = USED
            for mask in masks:
                mask[know.limbo] = USED
        elif kind == "swap":
            out = _label(know, event[5], bit)
            loc[out] = USED
            loc[know.limbo] = bit
            fits = SWAP_OK[event[2]]
            for v, mask in enumerate(masks):
                if v == a:
                    mask[out] = USED
                else:
                    for label, m in mask.items():
                        if m & bit and code_of(label) in fits:
                            mask[label] = m | USED
                mask[know.limbo] = bit
        elif kind == "two":
            p = event[4]
            given = event[5]
            kept = event[3][1] if event[3][0] == given else event[3][0]
            loc[know.limbo] = bit
            loc[given] = 1 << p
            both = bit | 1 << p
            for v, mask in enumerate(masks):
                mask[know.limbo] = bit
                if v in (a, p):
                    mask[given], mask[kept] = 1 << p, bit
                else:
                    mask[given] = mask[kept] = both
                know.pairs[v] = [
                    pr for pr in know.pairs[v] if given not in pr[:2] and kept not in pr[:2]
                ]
                if v not in (a, p):
                    know.pairs[v].append((given, kept, both))
            know.pair = (given, kept)
        elif kind == "discard":
            label = _label(know, event[5], bit)
            loc[label] = USED
            keep = know.pair if know.pair[0] else ()
            for v in range(seats):
                if v == a:
                    masks[v][label] = USED
                else:
                    _may_have_gone(know, v, a, USED, keep)
            know.pair = ("", "")
        elif kind == "claim_joker":
            _reveal(know, a)
            p = event[4]
            if event[8]:
                label = _label(know, JOKER, 1 << p)
                loc[label] = bit
                for mask in masks:
                    mask[label] = bit
            else:
                for mask in masks:
                    for label in JOKER_LABELS:
                        mask[label] &= ~(1 << p)
        elif kind == "joker_draw":
            label = _label(know, event[5], DECK)
            loc[label] = bit
            for v, mask in enumerate(masks):
                if v == a:
                    mask[label] = bit
                else:
                    for other, m in mask.items():
                        if m & DECK:
                            mask[other] = m | bit
        elif kind == "kill":
            _reveal(know, event[4])
        elif kind in ("exit", "fold", "show_trio", "claim_trio"):
            _leave(know, a)
        elif kind == "reshuffle":
            for label, where in loc.items():
                if where == USED:
                    loc[label] = DECK
            for mask in masks:
                for label, m in mask.items():
                    m &= ~DECK
                    mask[label] = (m & ~USED) | DECK if m & USED else m
    know.index = len(log)
    return know


def sample(know: Knowledge, seat: int, rng: random.Random) -> dict[str, int] | None:
    """New true locations: seat's unplaced cards re-dealt within their masks, or None."""
    pool_bits = DECK | USED | (0b1111 & ~(1 << seat))
    labels = [label for label, where in know.loc.items() if where & pool_bits]
    places = sorted({know.loc[label] for label in labels})
    index = {place: i for i, place in enumerate(places)}
    k = len(places)
    subsets = range(1 << k)
    cap = [0] * k
    for label in labels:
        cap[index[know.loc[label]]] += 1
    mine = know.masks[seat]
    within: dict[str, int] = {}
    for label in labels:
        m = 0
        for place in places:
            if mine[label] & place:
                m |= 1 << index[place]
        within[label] = m
    need = [sum(1 for label in labels if not within[label] & ~s) for s in subsets]
    room = [sum(cap[i] for i in range(k) if s >> i & 1) for s in subsets]
    pinned = [label for label in labels if within[label].bit_count() == 1]
    loose = [label for label in labels if within[label].bit_count() != 1]
    rng.shuffle(loose)
    new = dict(know.loc)
    for label in pinned + loose:
        m = within[label]
        options = [i for i in range(k) if m >> i & 1 and cap[i] > 0]
        chosen = -1
        while options:
            i = rng.choices(options, [cap[j] for j in options])[0]
            if all(need[s] < room[s] for s in subsets if s >> i & 1 and m & ~s):
                chosen = i
                break
            options.remove(i)
        if chosen < 0:
            return None
        cap[chosen] -= 1
        for s in subsets:
            if not m & ~s:
                need[s] -= 1
            if s >> chosen & 1:
                room[s] -= 1
        new[label] = places[chosen]
    for given, kept, both in know.pairs[seat]:
        if mine[given] == both and mine[kept] == both and new[given] == new[kept]:
            return None
    return new


def after_resample(know: Knowledge, seat: int, new: dict[str, int], seats: int) -> Knowledge:
    """Knowledge of the resampled state: seat's masks unchanged, the others' widened to hold
    the new truth (each seat still knows its own hand exactly)."""
    masks = []
    for v in range(seats):
        mask = dict(know.masks[v])
        if v != seat:
            bit = 1 << v
            for label, where in new.items():
                mask[label] = bit if where == bit else (mask[label] | where) & ~bit
        masks.append(mask)
    pairs = [list(know.pairs[v]) if v == seat else [] for v in range(seats)]
    pair = know.pair
    if pair[0] and new[pair[0]] != know.loc[pair[0]]:
        pair = (pair[1], pair[0])
    return Knowledge(know.index, dict(new), masks, know.limbo, pair, pairs)
