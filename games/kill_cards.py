"""Kill's cards: codes, values, colours, hand types and the exchange rule (RULINGS §3 L1-L6)."""

from __future__ import annotations

from typing import Final

RANKS: Final = "A23456789TJQK"
SUITS: Final = "HDCS"
JOKER: Final = "JK"
CARDS: Final = [r + s for s in SUITS for r in RANKS]
CODES: Final = [*CARDS, JOKER]
ORDER: Final = {c: i for i, c in enumerate(CODES)}
VALUE: Final = {c: RANKS.index(c[0]) + 1 for c in CARDS}
VALUE[JOKER] = 0

NONE: Final = 0
TRIO: Final = 1
WIN: Final = 2

# Event: kind, seat, card, cards, target, secret, secret_seats, points, success, count.
Event = tuple[str, int, str, tuple[str, ...], int, str, tuple[int, ...], int, bool, int]

_HIGH: Final = {c: (c[1] in "HD", 1 << (VALUE[c] - 10)) for c in CARDS if VALUE[c] >= 10}
# Normal cards get distinct bits; two Jokers add up to a bit no normal card uses.
_BIT: Final = {c: 1 << i for i, c in enumerate(CARDS)}
_BIT[JOKER] = 1 << 52
_CLASS: Final[dict[int, int]] = {}


def sort_cards(cards: list[str] | tuple[str, ...]) -> list[str]:
    """The cards in canonical order: hearts, diamonds, clubs, spades, each A..K, then Jokers."""
    return sorted(cards, key=ORDER.__getitem__)


def _winning_shape(cards: list[str]) -> bool:
    """Every non-Joker is 10/J/Q/K, all of one colour, all of distinct values (L2)."""
    red: bool | None = None
    seen = 0
    for card in cards:
        if card == JOKER:
            continue
        info = _HIGH.get(card)
        if info is None:
            return False
        colour, bit = info
        if red is None:
            red = colour
        elif colour != red or seen & bit:
            return False
        seen |= bit
    return True


def _classify(hand: list[str]) -> int:
    if len(hand) != 4:
        return NONE
    if _winning_shape(hand):
        return WIN
    for i in range(4):
        if _winning_shape(hand[:i] + hand[i + 1 :]):
            return TRIO
    return NONE


def classify(hand: list[str]) -> int:
    """WIN, TRIO or NONE for a 4-card hand (L2, KL18: a winning hand is not a trio)."""
    key = 0
    for card in hand:
        key += _BIT[card]
    kind = _CLASS.get(key)
    if kind is None:
        kind = _CLASS[key] = _classify(hand)
    return kind


def swappable(held: str, drawn: str) -> bool:
    """Whether a drawn card may replace a held one (L6 SWAP, KL4: no K-A wrap)."""
    if held == JOKER or drawn == JOKER:
        return True
    return held[1] == drawn[1] or abs(VALUE[held] - VALUE[drawn]) <= 1


SWAP_OK: Final = {d: frozenset(h for h in CODES if swappable(h, d)) for d in CODES}
