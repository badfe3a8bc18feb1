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

# A card's shape bit: a 10, J, Q or K sets its value's bit, in the low nibble if red, the
# next if black; a lower card sets LOW; a Joker sets none (it stands for any missing card).
LOW: Final = 1 << 8
_SHAPE: Final = {
    c: LOW if VALUE[c] < 10 else 1 << (VALUE[c] - 10 + (0 if c[1] in "HD" else 4)) for c in CARDS
}
_SHAPE[JOKER] = 0


def sort_cards(cards: list[str] | tuple[str, ...]) -> list[str]:
    """The cards in canonical order: hearts, diamonds, clubs, spades, each A..K, then Jokers."""
    return sorted(cards, key=ORDER.__getitem__)


def _winning_shape(a: int, b: int, c: int, d: int) -> bool:
    """Whether cards with these shape bits are 10/J/Q/K of one colour and of distinct values
    (L2): no bit set twice (the sum carries), no LOW, bits in one nibble only."""
    held = a | b | c | d
    return a + b + c + d == held and not held & LOW and (not held & 0xF or not held & 0xF0)


def classify(hand: list[str]) -> int:
    """WIN, TRIO or NONE for a 4-card hand (L2, KL18: a winning hand is not a trio)."""
    if len(hand) != 4:
        return NONE
    a, b, c, d = _SHAPE[hand[0]], _SHAPE[hand[1]], _SHAPE[hand[2]], _SHAPE[hand[3]]
    if _winning_shape(a, b, c, d):
        return WIN
    # A trio: the hand without one of its cards (shape bits 0) has a winning shape.
    if (
        _winning_shape(0, b, c, d)
        or _winning_shape(a, 0, c, d)
        or _winning_shape(a, b, 0, d)
        or _winning_shape(a, b, c, 0)
    ):
        return TRIO
    return NONE


def swappable(held: str, drawn: str) -> bool:
    """Whether a drawn card may replace a held one (L6 SWAP, KL4: no K-A wrap)."""
    if held == JOKER or drawn == JOKER:
        return True
    return held[1] == drawn[1] or abs(VALUE[held] - VALUE[drawn]) <= 1


SWAP_OK: Final = {d: frozenset(h for h in CODES if swappable(h, d)) for d in CODES}
